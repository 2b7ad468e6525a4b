"""The evidence block shaped for a reader (issue 27 point 2): passages, neighbours, dates as facts, every session of a
list, newest first for "current" questions; and the model's answer reading it (a scripted fake model)."""

from __future__ import annotations

from datetime import datetime

from ripplecli.answer.llm import llm_answer
from ripplecli.answer.reading import Asks, clipped, shaped_block
from ripplecli.runtime.llm import CallLog
from ripplecli.trace import Evidence, ReplyContext, SourceRef

DAY = "2023-05-08T14:00:00"


def said(mid: int, speaker: str, text: str, turn: int, session: str = "1", day: str = DAY) -> Evidence:
    """A memory of turn D<session>:<turn>, restated with its speaker, ranked by its id."""
    source = SourceRef(f"D{session}:{turn}", session, speaker, text, day, position=turn)
    return Evidence(mid, f"{speaker}: {text}", 0.0, mid, [source.turn_id], [source], conversation_id="chat")


FILLER = "We talked about the weather and the traffic on the way home. " * 6
LONG = (
    f"{FILLER}Anyway, the mechanic said the alternator repair comes to four hundred dollars in the end. {FILLER}"
)


def test_a_long_turn_is_clipped_to_the_passage_that_matches_the_question(fake_llm):
    asks = Asks.of("How much is the alternator repair?")
    shown = clipped(LONG, asks)
    assert "four hundred dollars" in shown and shown.startswith("… ") and shown.endswith(" …")
    assert len(shown.split()) < len(LONG.split()) / 2
    assert clipped("Short and sweet.", asks) == "Short and sweet."  # a short turn is shown whole


def test_a_best_memorys_chat_neighbours_are_read_with_it(fake_llm):
    """"How's the car?" ranks first and the answer two turns on ranks last: the block shows the exchange in chat
    order, the reply without repeating the question it answers."""
    car = said(1, "Sam", "How's the car? Did the garage call back?", 1)
    others = [said(10 + i, "Jordan", f"Training run {i} went fine, legs are tired.", 1, str(i + 2)) for i in range(8)]
    asked = said(30, "Sam", "Ugh, sorry. How much are they charging?", 3)
    answer = said(31, "Alex", "Four hundred, plus a belt.", 4)
    answer.context = ReplyContext("D1:3", "Sam", "Ugh, sorry. How much are they charging?")
    block = shaped_block("How much is the car repair?", [car, *others, asked, answer], fake_llm(), 160, None)
    ids = [e.memory_id for e in block.shown]
    assert ids[:3] == [1, 30, 31]  # one session, in the order it was said
    assert "[m31] Alex, 8 May 2023: Four hundred, plus a belt." in block.text  # its question is right above it


def test_date_questions_get_the_days_worked_out_as_facts(fake_llm):
    met = said(1, "Nora", "I met the landlord yesterday about the flat.", 1, "1", "2023-05-08T10:00:00")
    signed = said(2, "Nora", "I signed for the flat last Friday!", 1, "2", "2023-05-29T10:00:00")
    between = shaped_block(
        "How many days passed between meeting the landlord and signing for the flat?", [met, signed], fake_llm(), 600,
        None,
    )
    assert "- [m1] speaks of 7 May 2023." in between.text
    assert "- [m2] speaks of the Friday before 29 May 2023 (Friday 26 May 2023)." in between.text
    assert "- from [m1] to [m2]: 19 days." in between.text
    asked_on = datetime(2023, 6, 9)
    ago = shaped_block("How many weeks ago did Nora sign for the flat?", [signed], fake_llm(), 600, asked_on)
    assert "2 weeks (14 days) before today (9 June 2023)" in ago.text
    plain = shaped_block("Where is the flat?", [signed], fake_llm(), 600, None)
    assert "Worked out" not in plain.text  # no date facts for a question that asks no date


def test_a_list_question_reads_every_session_found_before_a_second_memory_of_any(fake_llm):
    chatty = [said(i, "Ana", f"More about the pottery class, part {i}, clay everywhere.", i, "1") for i in range(1, 9)]
    later = said(20, "Ana", "I also took a painting class this week.", 1, "5", "2023-06-08T10:00:00")
    third = said(21, "Ana", "Signed up for a dance class with Lee.", 1, "9", "2023-07-08T10:00:00")
    block = shaped_block("What classes has Ana taken?", [*chatty, later, third], fake_llm(), 90, None)
    assert {20, 21} <= {e.memory_id for e in block.shown} and len(block.shown) < 10


def test_a_current_question_reads_the_newest_statement_first_and_marks_older_ones(fake_llm):
    old = said(1, "User", "I have 17 postcards in my collection now.", 3, "1", "2023-03-01T10:00:00")
    new = said(2, "User", "My collection is up to 25 postcards!", 2, "2", "2023-06-01T10:00:00")
    block = shaped_block("How many postcards do I currently have?", [old, new], fake_llm(), 600, None)
    assert block.text.index("[m2]") < block.text.index("[m1]")
    assert "[m2] User, 1 June 2023 (latest):" in block.text and "[m1] User, 1 March 2023 (earlier):" in block.text


def test_the_model_reads_the_shaped_block_and_today_reaches_its_facts(fake_llm):
    model = fake_llm("2 weeks [m2]")
    signed = said(2, "Nora", "I signed for the flat last Friday!", 1, "2", "2023-05-29T10:00:00")
    answer = llm_answer(model, "How many weeks ago did Nora sign?", [signed], CallLog(), today=datetime(2023, 6, 9))
    assert answer.method == "llm" and answer.citations == [2]
    prompt = model.requests[0][0]
    assert "(latest)" not in prompt[-1]["content"] and "before today (9 June 2023)" in prompt[-1]["content"]
    assert "excerpts of the chats" in prompt[0]["content"]  # the shaped block's instructions
    plain = fake_llm("2 weeks [m2]")
    llm_answer(plain, "How many weeks ago did Nora sign?", [signed], CallLog(), block="plain")
    assert "Worked out" not in plain.requests[0][0][-1]["content"]


def test_the_model_is_handed_the_day_asked(fake_llm):
    """`--answer llm` gives the model the duration worked out from the day asked; `auto` keeps the rules' own."""
    from ripplecli.answer import ModelProvider, answer_for

    llm = fake_llm("3 weeks [m2]")
    signed = said(2, "Nora", "I signed for the flat last Friday!", 1, "2", "2023-05-29T10:00:00")
    model = ModelProvider(True, lambda: llm)
    answer_for("llm", "How many weeks ago did Nora sign?", [signed], model, today=datetime(2023, 6, 16))
    assert "3 weeks (21 days) before today (16 June 2023)" in llm.requests[0][0][-1]["content"]
    kept = answer_for("auto", "How many weeks ago did Nora sign?", [signed], model, today=datetime(2023, 6, 16))
    assert kept is not None and kept.method == "typed" and len(llm.requests) == 1


def test_a_how_many_question_lists_the_numbers_each_memory_gives(fake_llm):
    tomatoes = said(1, "User", "The weather was lovely. I planted 5 tomato plants in April, they grow fast.", 2, "1")
    cucumbers = said(2, "User", "My 3 cucumber plants are doing great too!", 4, "2", "2023-05-20T10:00:00")
    chat = said(3, "User", "Do you like tomato soup?", 6, "2", "2023-05-20T10:00:00")
    asked = "How many tomato and cucumber plants did I plant?"
    block = shaped_block(asked, [tomatoes, cucumbers, chat], fake_llm(), 600, None)
    facts = block.text.split("Numbers the memories give:\n", 1)[1].splitlines()
    assert facts == [  # the passage with the number, not the weather; a question asked in the chat is no answer
        "- [m1] I planted 5 tomato plants in April, they grow fast.",
        "- [m2] My 3 cucumber plants are doing great too!",
    ]


def test_a_photo_caption_copied_into_the_answer_is_dropped(fake_llm):
    """LoCoMo turns carry "[image: …]" captions: the block shows them as (photo: …), and a caption the model
    copies after its answer is no part of it."""
    shared = said(4, "Maria", "We went camping! [image: a photo of a tent by a lake]", 1)
    model = fake_llm("by a lake [image: a photo of a tent [m4]")
    answer = llm_answer(model, "Where did Maria camp?", [shared], CallLog())
    assert answer.span == "by a lake" and answer.citations == [4]
    assert "(photo: a tent by a lake)" in model.requests[0][0][-1]["content"]


def test_the_block_never_outgrows_a_small_context(fake_llm):
    """A model with a 1,024-token context (half of it for the answer) reads fewer memories, not a cut prompt."""
    from ripplecli.answer.llm import block_prompt
    from ripplecli.runtime.llm import prompt_budget, prompt_tokens

    text = "Pottery class number {} was fun, the clay was cold and wet today. " * 2
    many = [said(i, "Ana", text.format(i, i), i) for i in range(30)]
    small = fake_llm()
    small.n_ctx, small.max_tokens = 1024, 256
    prompt, shown, budget = block_prompt(small, "What did Ana make in pottery class?", many, "shaped", None, None)
    assert prompt_tokens(small, prompt) <= prompt_budget(small) and 1 <= len(shown) < 30 and budget < 600


def test_the_commas_left_between_citations_are_no_part_of_the_answer(fake_llm):
    shared = said(4, "Maria", "We adopted four cats this year.", 1)
    answer = llm_answer(fake_llm("4 [m4], [m4], [m4],"), "How many cats did Maria adopt?", [shared], CallLog())
    assert answer.span == "4" and answer.text == "4 [m4]"
