"""What/which spans, echoes, answers to questions asked in the chat, a leaning yes/no and "not sure", on hand-written
evidence (and the sample chats through the real parts)."""

from __future__ import annotations

from pathlib import Path

import pytest
from test_answer import memory

from ripplecli.answer import NOT_FOUND
from ripplecli.answer.phrases import answer_phrase, asked_noun, noun_phrase, quoted
from ripplecli.answer.typed import asked_part, question_type, typed_answer


def test_the_asked_noun() -> None:
    assert asked_noun("What workshop did Caroline attend recently?") == "workshop"
    assert asked_noun("What kind of online group did John join?") == "group"
    assert asked_noun("In what activity did Maria and her friends take part?") == "activity"
    assert asked_noun("What did Maria do to feel closer to her faith?") is None
    assert asked_noun("What was Melanie's favorite book?") is None


def test_phrase_rules() -> None:
    assert (
        noun_phrase("Caroline went to an LGBTQ+ counseling workshop.", "workshop", set())
        == "LGBTQ+ counseling workshop"
    )
    assert noun_phrase("Caroline went to a workshop.", "workshop", set()) is None
    assert noun_phrase("Booked: room 7 at 3pm", "room", set()) == "room 7"  # the number names which room
    assert noun_phrase("We board at gate B12.", "gate", set()) == "gate B12"
    assert quoted('I loved "Becoming Nicole" by Amy Ellis Nutt. It is true.') == '"Becoming Nicole" by Amy Ellis Nutt'
    assert quoted("No title here.") is None
    assert answer_phrase("Maria joined a gym last week!", {"maria"}) == "joined a gym"
    caption = "[image: a photo of a certificate of completion of a university degree]"
    assert answer_phrase(caption, set()) == "certificate of completion of a university degree"


def test_what_names_the_thing_with_its_modifiers() -> None:
    evidence = [
        memory(
            1,
            "Caroline",
            "Last Friday I went to an LGBTQ+ counseling workshop and it was really enlightening.",
            restated="Last Friday Caroline went to an LGBTQ+ counseling workshop and it was really enlightening.",
        )
    ]
    answer = typed_answer("What workshop did Caroline attend?", evidence)
    assert answer.type == "what" and answer.span == "LGBTQ+ counseling workshop" and "[m1]" in answer.text


def test_a_book_or_song_is_its_quoted_title() -> None:
    evidence = [memory(1, "Caroline", 'I recommended "Becoming Nicole" by Amy Ellis Nutt, a real inspiring story.')]
    assert typed_answer("What book did Caroline recommend?", evidence).span == '"Becoming Nicole" by Amy Ellis Nutt'


def test_an_echo_gives_way_to_the_clause_that_says_something() -> None:
    evidence = [
        memory(
            1,
            "Caroline",
            "Last Friday I went to a council meeting for adoption. So many people wanted loving homes for children.",
            restated="Last Friday Caroline went to a council meeting for adoption. So many people wanted loving homes"
            " for children.",
        )
    ]
    span = typed_answer("What did Caroline see at the council meeting for adoption?", evidence).span or ""
    assert "loving homes for children" in span and "council" not in span
    news = [memory(2, "Maria", "Got some great news to share. I joined a gym last week!")]
    news[0].restatement = "Maria: Maria got some great news to share. Maria joined a gym last week!"
    assert typed_answer("What exciting news did Maria share?", news).span == "joined a gym"


def test_the_answer_to_a_question_asked_in_the_chat_wins() -> None:
    evidence = [
        memory(1, "Caroline", "What's a favorite book you remember from your childhood?"),
        memory(2, "Melanie", 'I loved reading "Charlotte\'s Web" as a kid.'),
        memory(9, "Melanie", "This book I read last year reminds me to always pursue my dreams."),
    ]
    answer = typed_answer("What was Melanie's favorite book from her childhood?", evidence)
    assert "Charlotte's Web" in (answer.span or "") and answer.citations == [2]


def test_a_would_question_leans_the_way_the_evidence_points() -> None:
    against = [memory(1, "Melanie", "That roadtrip was awful, my son got hurt in an accident.")]
    answer = typed_answer("Would Melanie go on another roadtrip soon?", against)
    assert answer.span == "Likely no" and answer.text.startswith("likely no") and "against:" in answer.text
    for_ = [memory(2, "Melanie", "I love classical music, Bach and Mozart are my favourites.")]
    assert typed_answer("Would Melanie enjoy classical music by Vivaldi?", for_).span == "Likely yes"
    said = [memory(3, "Nora", "No, I passed on the Highland apartment after all.")]
    assert typed_answer("Did Nora take the Highland apartment?", said).span == "No"


def test_nothing_that_carries_the_question_is_still_not_found() -> None:
    answer = typed_answer("What book did Riley write?", [memory(1, "Riley", "I adopted a cat named Pickle.")])
    assert not answer.found and answer.span == NOT_FOUND and answer.text.startswith(NOT_FOUND)


def test_how_often_takes_the_frequency() -> None:
    evidence = [memory(1, "Melanie", "We don't go often, usually only once or twice a year. Those times are special.")]
    answer = typed_answer("How often does Melanie go to the beach?", evidence)
    assert answer.type == "how-often" and answer.span == "once or twice a year"


def test_a_name_question_takes_the_name_the_question_does_not_give() -> None:
    evidence = [memory(1, "John", "Thanks, Maria! Our one-year-old is so cute, his name is Kyle!")]
    evidence[0].restatement = "John: Thanks, Maria! John and Maria's one-year-old is so cute, his name is Kyle!"
    evidence[0].persons = ["john", "maria", "kyle"]
    evidence.append(memory(2, "Maria", "How are the kids doing?"))  # the other speaker of the chat
    assert typed_answer("What is the name of John's one-year-old child?", evidence).span == "Kyle"


def test_a_reason_is_what_follows_because_or_for() -> None:
    race = [memory(1, "Caroline", "Raising awareness for mental health is super rewarding - so proud of you!")]
    assert typed_answer("What did the charity race raise awareness for?", race).span == "mental health"
    blog = [memory(2, "John", "I started blogging about politics to raise awareness and start conversations.")]
    assert typed_answer("Why did John start blogging about politics?", blog).span == (
        "to raise awareness and start conversations"
    )
    trip = [memory(3, "Jon", "Took a short trip last week to Rome to clear my mind a little.")]
    assert typed_answer("What did Jon take a trip to Rome for?", trip).span == "to clear my mind a little"


def test_a_list_question_names_the_things_of_several_memories() -> None:
    evidence = [
        memory(1, "Maria", "Lately I really enjoy aerial yoga, it's a great way to switch off."),
        memory(2, "Maria", "I want to get stronger, so I'm trying kundalini yoga."),
        memory(3, "John", "Yoga sounds fun!"),
    ]
    span = typed_answer("What types of yoga has Maria practiced?", evidence).span
    assert span == "aerial yoga, kundalini yoga"
    pets = [
        memory(4, "Melanie", "Our pet dog is called Oliver."),
        memory(5, "Melanie", "Our new pet cat is named Bailey."),
    ]
    assert typed_answer("What are the names of Melanie's pets?", pets).span == "Oliver, Bailey"


def test_who_names_a_relation_when_no_person_is_named() -> None:
    evidence = [
        memory(1, "Maria", "I started volunteering to help make a difference."),
        memory(
            2,
            "Maria",
            "My aunt believed in volunteering, so I'm inspired by her.",
            restated="Maria's aunt believed in volunteering, so Maria is inspired by her.",
        ),
        memory(3, "John", "That's great, Maria!"),
    ]
    assert typed_answer("Who inspired Maria to start volunteering?", evidence).span == "Maria's aunt"


def test_memories_of_one_turn_or_of_two_chats_are_weighed_without_error() -> None:
    """Two memories from the same turn, and the same turn id in another chat of the store, sort apart."""
    first = memory(1, "Alex", "Harbor Grill was lovely, I love the terrace.")
    second = memory(2, "Alex", "Harbor Grill has a great oyster bar.")
    second.sources[0].turn_id = first.sources[0].turn_id
    other_chat = memory(1, "Alex", "Maya is allergic to shellfish, Harbor Grill is risky.")
    other_chat.conversation_id = "another-chat"
    answer = typed_answer("Should Alex go to Harbor Grill?", [first, second, other_chat])
    assert answer.found and answer.type == "should"


def test_a_weekday_or_weeks_ago_is_written_against_the_day_it_was_said() -> None:
    """ "Last Fri" said on Saturday 15 July 2023 is "the Friday before 15 July 2023", as people date it."""
    said = "2023-07-15T10:00:00"
    workshop = [memory(1, "Melanie", "Last Fri I finally took my kids to a pottery workshop.", said)]
    assert typed_answer("When did Melanie go to the pottery workshop?", workshop).span == (
        "the Friday before 15 July 2023"
    )
    group = [memory(2, "Caroline", "I joined a new activist group last Tues.", said)]
    assert typed_answer("When did Caroline join an activist group?", group).span == "the Tuesday before 15 July 2023"
    race = [memory(3, "Nate", "I won my fourth tournament on Friday!", said)]
    assert typed_answer("When did Nate win his fourth tournament?", race).span == "the Friday before 15 July 2023"
    camping = [memory(4, "Melanie", "We went camping with the fam two weekends ago.", said)]
    assert typed_answer("When did Melanie go camping?", camping).span == "two weekends before 15 July 2023"
    party = [memory(5, "Nate", "I'm hosting a gaming party next Saturday.", said)]
    assert typed_answer("When is Nate hosting a gaming party?", party).span == "the Saturday after 15 July 2023"


def test_how_many_times_a_week_is_a_frequency() -> None:
    evidence = [memory(1, "John", "We work out together three times a week, it keeps us going.")]
    answer = typed_answer("How many times a week does John work out with his family?", evidence)
    assert answer.type == "how-often" and answer.span == "three times a week"


def test_a_question_that_names_a_time_prefers_what_was_said_then() -> None:
    evidence = [
        memory(1, "Maria", "I shared my grandma's cookie recipe with the neighbours.", "2023-05-01T10:00:00"),
        memory(2, "Maria", "I shared the big news with everyone: I adopted a puppy!", "2023-06-16T18:00:00"),
    ]
    answer = typed_answer("What did Maria share on 16 June, 2023?", evidence)
    assert answer.citations == [2] and "16 June 2023" in answer.text
    assert typed_answer("What did Maria share?", evidence).citations == [1]  # no time named: the best-ranked


def test_who_is_not_the_other_speaker_a_restated_we_put_in() -> None:
    """ "We celebrated…" restated "Melanie and Caroline celebrated…", or "Thanks, Caroline!", does not make Caroline
    the answer."""
    evidence = [
        memory(
            1,
            "Melanie",
            "We celebrated my daughter's birthday with a concert, Matt Patterson played!",
            restated="Melanie and Caroline celebrated Melanie's daughter's birthday with a concert, Matt Patterson"
            " played!",
            persons=["melanie", "caroline", "matt patterson"],
        ),
        memory(2, "Caroline", "That sounds lovely, Melanie!"),
    ]
    assert typed_answer("Who performed at the concert at Melanie's daughter's birthday?", evidence).span == (
        "Matt Patterson"
    )
    spoken_to = [
        memory(3, "Melanie", "Thanks Caroline, we had a party for my daughter's birthday.", persons=["caroline"]),
        memory(4, "Caroline", "Happy birthday to her!"),
    ]
    assert typed_answer("Whose birthday did Melanie celebrate?", spoken_to).span != "Caroline"  # the one spoken to
    group = [
        memory(5, "Alex", "Went to yoga with Sam this morning.", persons=["sam"]),
        memory(6, "Sam", "It was a good class!"),
        memory(7, "Jo", "Nice, next time I'm in."),
    ]
    assert typed_answer("Who did Alex go to yoga with?", group).span == "Sam"  # a chat of three: Sam is no addressee


def test_a_count_keeps_the_unit_asked_in_and_how_long_ago_keeps_ago() -> None:
    puppies = [memory(1, "Maria", "I adopted Shadow two weeks after Coco, both are doing great.")]
    assert typed_answer("How many weeks passed between Maria adopting Coco and Shadow?", puppies).span == "two weeks"
    party = [memory(2, "Nate", "7 people came to my gaming party, it was a blast.")]
    assert typed_answer("How many people came to Nate's gaming party?", party).span == "7"
    birthday = [memory(3, "Caroline", "A friend made it for my 18th birthday ten years ago.")]
    assert typed_answer("How long ago was Caroline's 18th birthday?", birthday).span == "ten years ago"


def test_the_answer_is_the_news_between_the_words_the_question_asks_with() -> None:
    evidence = [
        memory(
            1,
            "Caroline",
            "I was out walking in my neighborhood when I came across this cool rainbow sidewalk for Pride.",
            restated="Caroline was out walking in Caroline's neighborhood when Caroline came across this cool rainbow"
            " sidewalk for Pride.",
        )
    ]
    span = typed_answer("What did Caroline find in her neighborhood during her walk?", evidence).span
    assert span == "came across this cool rainbow sidewalk for Pride"


def test_a_named_pet_or_friend_is_a_cue_not_only_a_speaker() -> None:
    """ "When did Maria get Coco?": Coco is a name the store keeps as a person, but not one of the chat's speakers,
    so the memory that names her answers instead of "not found"."""
    evidence = [
        memory(
            1,
            "Maria",
            "I got a puppy two weeks ago, her name is Coco!",
            "2023-08-11T10:00:00",
            persons=["maria", "coco"],
        ),
        memory(2, "John", "Long time no talk, Maria!", "2023-08-11T10:05:00"),
    ]
    answer = typed_answer("When did Maria get Coco?", evidence)
    assert answer.found and answer.span == "two weeks before 11 August 2023"
    assert not typed_answer("When did Maria meet John?", evidence).found  # only the speakers' names


def test_a_question_ending_on_a_preposition_gets_what_follows_its_word() -> None:
    from ripplecli.answer.objects import asked_object, object_after

    asked = asked_object("What is Maya allergic to?", {"maya"})
    assert asked is not None and (asked.anchor, asked.preposition) == ("aller", "to")
    assert object_after(asked, "She's allergic to shellfish, and it's a serious one.", set()) == "shellfish"
    assert object_after(asked, "Maya had a bad allergic reaction at the reception.", set()) is None
    race = asked_object("What did the charity race raise awareness for?", set())
    assert race is not None
    assert object_after(race, "Raising awareness for mental health is super rewarding.", set()) == "mental health"
    assert asked_object("What did Jon take a trip to Rome for?", {"jon"}) is None  # "Rome for" asks why
    assert asked_object("Where did Maya go to?", {"maya"}) is None


def test_a_time_after_the_preposition_is_read_past() -> None:
    from ripplecli.answer.objects import asked_object

    for question in (
        "What topic has John been blogging about recently?",
        "What did Maria participate in last weekend before April 10, 2023?",
        "What was Maria involved in on 31 July, 2023?",
    ):
        assert asked_object(question, {"john", "maria"}) is not None, question
    blog = [memory(1, "John", "Since we chatted last, I've been blogging about politics and the government.")]
    assert typed_answer("What topic has John been blogging about recently?", blog).span == "politics and the government"
    assert asked_object("What did Maria do in May 2023?", {"maria"}) is None  # "in May 2023" is a time


def test_what_was_done_is_the_object_the_evidence_gives_the_questions_verb() -> None:
    from ripplecli.answer.objects import asked_doing

    assert asked_doing("What did Mel and her kids make during the pottery workshop?", {"mel"}) == "make"
    assert asked_doing("What does Gina's tattoo symbolize?", {"gina"}) == "symbolize"
    assert asked_doing("What did John do to help his community?", {"john"}) is None  # the doing is not named
    store = [memory(1, "Gina", "I'm over the moon, I found the perfect spot for my clothing store!")]
    assert typed_answer("What did Gina find for her clothing store?", store).span == "perfect spot"
    pots = [
        memory(
            2,
            "Melanie",
            "At the pottery workshop we made our own pots, it was fun.",
            restated="At the pottery workshop Melanie and Caroline made Melanie and Caroline's own pots, it was fun.",
            persons=["caroline"],
        )
    ]
    assert typed_answer("What did Melanie make during the pottery workshop?", pots).span == "pots"


def test_a_reply_opener_a_relative_clause_or_a_who_or_where_is_no_what_answer() -> None:
    flooring = [
        memory(1, "Jon", "I'm after Marley flooring for the studio, which is what dance studios usually use."),
        memory(2, "Gina", "Good call on the floor, Jon."),
    ]
    answer = typed_answer("What kind of flooring is Jon looking for in his dance studio?", flooring)
    assert answer.span != "which is what dance studios usually use"
    nicole = [memory(3, "Caroline", "I loved Becoming Nicole by Amy Ellis Nutt.", persons=["amy ellis nutt"])]
    assert not typed_answer("What did Caroline take away from the book Becoming Nicole?", nicole).sure
    gift = [memory(4, "Caroline", "This necklace was a gift from my grandma in Sweden.", locations=["Sweden"])]
    assert typed_answer("Where is Caroline's grandma from?", gift).span == "Sweden"  # where asks it


def test_which_names_the_noun_before_its_verb() -> None:
    assert asked_noun("Which song motivates Caroline to be courageous?") == "song"
    assert asked_noun("Which outdoor gear company likely signed up John?") == "company"
    brave = [memory(1, "Caroline", 'The song "Brave" by Sara Bareilles motivates me to be courageous.')]
    assert typed_answer("Which song motivates Caroline to be courageous?", brave).span == '"Brave" by Sara Bareilles'


def test_a_fronted_clause_is_background_and_the_news_follows_its_comma() -> None:
    drive = [memory(1, "Ana", "After the long drive back home, I slept for two whole days.")]
    assert typed_answer("What did Ana say about the drive?", drive).span == "slept for two whole days"


def test_an_answer_that_only_appraises_is_not_sure_unless_a_feeling_is_asked() -> None:
    meeting = [memory(1, "Caroline", "The council meeting for adoption was inspiring and emotional.")]
    assert not typed_answer("What did Caroline see at the council meeting for adoption?", meeting).sure
    picnic = [memory(2, "Maria", "We did fun activities at the picnic with my church friends.")]
    assert not typed_answer("What activities did Maria do at the picnic with her church friends?", picnic).sure
    felt = typed_answer("What emotions did Caroline feel at the council meeting for adoption?", meeting)
    assert felt.sure and felt.span == "inspiring and emotional"  # a feeling asked is answered by one
    meal = [memory(3, "John", "Sharing a tasty meal with my family.")]
    assert not typed_answer("What kind of meal did John share with his family?", meal).sure


def test_allergic_to_is_answered_by_the_memory_that_says_it_not_the_best_ranked_one() -> None:
    evidence = [
        memory(1, "Alex", "Maya had a bad allergic reaction at the reception. Her lips started swelling."),
        memory(2, "Alex", "The allergist confirmed it: she's allergic to shellfish, and it's a serious one."),
    ]
    answer = typed_answer("What is Maya allergic to?", evidence)
    assert answer.span == "shellfish" and "[m2]" in answer.text


def test_for_a_length_of_time_is_no_purpose() -> None:
    evidence = [memory(1, "Jordan", "I got shin splints in week five and had to rest for ten days.")]
    assert typed_answer("What did Jordan rest for?", evidence).span != "ten days"


def test_who_is_doing_something_is_the_one_whose_words_carry_the_doing() -> None:
    evidence = [
        memory(1, "Nora", "Mom cried, Dad immediately started looking up flights to Denver."),
        memory(2, "Ben", "Any updates on the move to Denver?"),
        memory(3, "Nora", "The movers come on May 28th."),
    ]
    answer = typed_answer("Who is moving to Denver?", evidence)
    assert answer.span == "Nora" and "[m3]" in answer.text


def test_a_duration_said_as_an_adjective_is_a_duration() -> None:
    evidence = [memory(1, "Jordan", "I also found a twelve-week training plan, three runs a week.")]
    assert typed_answer("How long is Jordan's training plan?", evidence).span == "twelve weeks"


def test_what_someone_asked_is_their_question_and_a_two_word_name_is_a_name() -> None:
    evidence = [
        memory(1, "Jane Doe", "Jane Doe is flying to Lisbon on May 3rd with Maya."),
        memory(2, "Jane Doe", "We picked Alfama. Any bakery nearby?"),
        memory(3, "Claude", "Try the custard tarts two streets up from the cathedral."),
    ]
    for e in evidence:
        e.persons = ["jane doe"]
    answer = typed_answer("What did Jane Doe ask about bakeries?", evidence)
    assert answer.span == "Any bakery nearby?" and "[m2]" in answer.text


def test_a_name_at_the_start_of_a_reply_is_a_name() -> None:
    from ripplecli.answer.phrases import names_in

    assert names_in("Crumb & Co. Get the cardamom buns.", set()) == "Crumb & Co"
    assert names_in("Thanks! My dog Max is great.", set()) == "Max"  # "Thanks" and "My" only open sentences


def test_a_habit_of_a_weekday_answers_which_day_in_its_own_words() -> None:
    evidence = [memory(1, "Maya", "The climbing gym on Mondays is closed now, so let's go on Wednesdays.")]
    answer = typed_answer("Which day do we go climbing?", evidence)
    assert answer.span == "Wednesdays" and "“so let's go on Wednesdays.”" in answer.text


def test_an_answer_span_does_not_end_on_a_comma() -> None:
    evidence = [memory(1, "Alex", "Rua da Ribeira 12, Porto", restated="Rua da Ribeira 12, Porto")]
    evidence[0].locations = ["rua da ribeira 12"]
    answer = typed_answer("Where is Alex staying?", evidence)
    assert not answer.span.endswith(",")


def test_the_reply_to_a_speakers_own_question_answers_what_they_should_do() -> None:
    """ "What should Alex pack?" is about Alex, and the assistant's reply to Alex's question answers it."""
    from ripplecli.trace import ReplyContext

    asked = memory(1, "Alex", "What should I pack for a week in Lisbon in March?")
    reply = memory(2, "ChatGPT", "Layers, a light rain jacket and comfortable shoes for the hills.")
    reply.context = ReplyContext("D1:1", "Alex", "What should I pack for a week in Lisbon in March?")
    answer = typed_answer("What should Alex pack for Lisbon?", [asked, reply])
    assert answer.span.startswith("Layers") and "[m2]" in answer.text


def test_a_yes_to_the_very_question_is_said_outright() -> None:
    from ripplecli.trace import ReplyContext

    packing = memory(1, "ChatGPT", "Layers, a light rain jacket and comfortable shoes for the hills.")
    reply = memory(2, "ChatGPT", "Yes, with a sweater underneath.")
    reply.context = ReplyContext("D1:3", "Alex", "Is this jacket warm enough?")
    answer = typed_answer("Is the jacket warm enough?", [packing, reply])
    assert answer.span == "Yes" and answer.text.startswith("Yes — ")


def test_a_replys_opener_is_no_part_of_the_answer() -> None:
    assert answer_phrase("Thanks, Alex will book the engenho visit.", {"alex"}) == "will book the engenho visit"


def test_counts_said_in_words_and_names_that_are_no_days() -> None:
    from ripplecli.answer.phrases import names_in
    from ripplecli.answer.spans import count_span

    assert count_span("Nora has about forty boxes of books.") == "forty"
    assert count_span("Four hundred, plus a belt") == "Four hundred"
    assert count_span("twenty-five people came") == "twenty-five"
    assert names_in("Nora took Biscuit to the dog beach on Sunday.", {"nora"}) == "Biscuit"


def test_in_two_weeks_is_a_time_in_words_too() -> None:
    from datetime import datetime

    from ripplecli.answer.spans import time_span

    said = datetime(2026, 2, 8, 11, 20)
    assert time_span("She starts chemo in two weeks.", said) == time_span("She starts chemo in 2 weeks.", said) != ""


def test_a_short_reply_without_a_count_takes_the_count_it_answers() -> None:
    from ripplecli.trace import ReplyContext

    reply = memory(2, "Sam", "That's not terrible for an alternator honestly.")
    reply.context = ReplyContext("D1:1", "Alex", "Four hundred, plus they want to replace a belt.")
    answer = typed_answer("How much did the alternator cost?", [reply])
    assert answer.span == "Four hundred" and "Four hundred, plus" in answer.text


def test_a_habit_or_a_duty_is_no_purpose_and_a_doing_for_someone_is() -> None:
    """ "we used to jog" and "had to rest" say what was done; "running it for the … Foundation" says why."""
    evidence = [
        memory(1, "Jordan", "I signed up for the Lakeshore 10K on May 17th."),
        memory(2, "Jordan", "She's the one who got me into running, we used to jog around the reservoir every day."),
        memory(3, "Jordan", "I'm running it for the Northside Lymphoma Foundation, they fund research."),
    ]
    answer = typed_answer("Why is Jordan running the Lakeshore 10K?", evidence)
    assert answer.span == "for the Northside Lymphoma Foundation" and answer.sure and "[m3]" in answer.text
    rest = [memory(4, "Jordan", "The training is up and down. I got shin splints and had to rest for ten days.")]
    assert typed_answer("What is Jordan training for?", rest).span != "to rest for ten days"
    cousin = [memory(5, "Maria", "My cousin had to leave and find a new place in a hurry.")]
    assert typed_answer("Why did Maria need to help her cousin find a new place?", cousin).span == (
        "to leave and find a new place in a hurry"  # a duty answers why someone needed to
    )
    store = [memory(6, "Gina", "I added some dance items to Gina's store.")]
    assert typed_answer("Why did Gina combine her clothing business with dance?", store).span != "to Gina's store"


def test_no_span_of_the_asked_kind_is_not_sure_with_the_top_memory() -> None:
    from ripplecli.answer import NOT_SURE

    evidence = [
        memory(1, "Nora", "It is. So I'd be leaving Chicago."),
        memory(2, "Nora", "It's tiny, but it's mine for a year. The movers come on May 28th."),
    ]
    answer = typed_answer("Why is Nora moving?", evidence)
    assert answer.found and not answer.sure and answer.span == NOT_SURE
    assert answer.text.startswith(f"{NOT_SURE} — closest: Nora") and answer.citations == [1]
    assert answer.to_dict()["sure"] is False
    from ripplecli.api import brief_answer
    from ripplecli.cli.render import answer_text

    assert brief_answer(answer.to_dict())["sure"] is False  # what an agent reads through MCP
    assert answer_text(answer).startswith("[bold yellow]answer[/] (typed, why): not sure — closest:")
    assert typed_answer("Where is Nora moving to?", evidence).span == NOT_SURE  # no place is named
    assert typed_answer("What did Nora say about the movers?", evidence).sure  # a what-question takes the clause


def test_an_amount_or_a_name_asked_in_the_chat_answers_the_same_question() -> None:
    """ "How's the car?" … "How much are they charging?" — "Four hundred": the reply to the same kind of question."""
    car = [
        memory(1, "Sam", "How's the car? Did the garage call back?"),
        memory(2, "Alex", "They did. The alternator is dead, so I'm taking the bus all week."),
        memory(3, "Sam", "Ugh, sorry. How much are they charging?"),
        memory(4, "Alex", "Four hundred, plus they want to replace a belt while they're in there."),
    ]
    answer = typed_answer("How much is the car repair?", car)
    assert answer.span == "Four hundred" and "[m4]" in answer.text and "How much are they charging?" in answer.text
    cat = [
        memory(1, "Riley", "You'll do it. Oh, I adopted a cat, by the way."),
        memory(2, "Jordan", "No way! What's its name?"),
        memory(3, "Riley", "Pickle. She's grey and extremely opinionated."),
    ]
    assert typed_answer("What is the name of Riley's cat?", cat).span == "Pickle"


def test_a_name_question_takes_the_name_the_top_memory_gives() -> None:
    """ "What is my dog's name?": no memory says "dog", the top one names a greyhound."""
    evidence = [memory(1, "You", "I adopted a greyhound named Biscuit last week."), memory(2, "ChatGPT", "Congrats!")]
    answer = typed_answer("What is my dog's name?", evidence)
    assert answer.found and answer.span == "Biscuit" and "[m1]" in answer.text
    kyle = [memory(3, "John", "Thanks, Maria! Our son is so cute, his name is Kyle! Maria says hi.")]
    assert typed_answer("What is the name of John's son?", kyle).span == "Kyle"


def test_a_tie_a_choice_a_guess_a_title_a_caption_and_an_echo_are_not_sure() -> None:
    tie = [memory(1, "Gina", "Hi!"), memory(2, "Gina", "The store looks amazing."), memory(3, "Gina", "Store is old.")]
    assert not typed_answer("What did Gina say about the store?", tie).sure  # two memories say it: which one?
    beach = [memory(3, "John", "I love the beach, and the mountains are lovely too.")]
    assert not typed_answer("Does John live close to a beach or the mountains?", beach).sure
    degree = [memory(4, "John", "My degree gave me a passion for making a positive impact.")]
    assert not typed_answer("What might John's degree be in?", degree).sure
    book = [memory(5, "Caroline", "It reminds me of a book I read a while ago.")]
    assert not typed_answer("What book did Caroline recommend?", book).sure
    photo = [memory(6, "Gina", "[image: a photo of a group of people in a dance class]")]
    assert not typed_answer("What does Gina say about the dancers in the dance class?", photo).sure
    cause = [memory(7, "John", "I've done events for the cause.")]
    assert not typed_answer("What causes has John done events for?", cause).sure


def test_how_something_was_done_is_what_follows_by_and_a_feeling_is_not_read() -> None:
    confident = [memory(1, "Gina", "I stay confident by reminding myself of my successes and progress.")]
    answer = typed_answer("How does Gina stay confident in her business?", confident)
    assert answer.type == "how" and answer.span == "by reminding myself of my successes and progress"
    night = [memory(2, "Jon", "The official opening night is tomorrow, it's been a great ride.")]
    assert not typed_answer("How does Jon feel about the opening night of his dance studio?", night).sure


def test_a_place_said_without_a_name_and_a_certificate_of_what_it_is_for() -> None:
    bone = [memory(1, "Melanie", "Oliver hid his bone in Melanie's slipper, so funny.")]
    assert typed_answer("Where did Oliver hide his bone?", bone).span == "Melanie's slipper"
    photo = [memory(2, "John", "[image: a photo of a certificate of completion of a university degree]")]
    assert typed_answer("What did John receive a certificate for?", photo).span == "completion of a university degree"
    dogs = [memory(3, "Maria", "I volunteer at the dog shelter once a month.")]
    assert typed_answer("How many dogs has Maria adopted from the dog shelter?", dogs).span != "once"


def test_not_sure_is_an_abstention() -> None:
    from ripplecli.eval.metrics import is_abstention

    assert is_abstention("not sure")


@pytest.mark.slow
def test_the_sample_chats_are_answered_right_or_not_sure_through_the_real_parts(tmp_path) -> None:
    """The demo's own questions through the real encoder and spaCy: each answer is right or says "not sure"."""
    from ripplecli.answer import NOT_SURE
    from ripplecli.api import Memory

    chats = Path(__file__).parents[1] / "sample_chats"
    questions = [
        "Why is Jordan running the Lakeshore 10K?",
        "What is Jordan raising money for?",
        "How much is the car repair?",
        "Should Alex take Maya to Harbor Grill?",
        "Where is Nora moving to?",
        "Why did Jordan stop running?",
        "Why is Nora moving?",
        "What is Jordan training for?",
    ]
    with Memory(tmp_path / "store") as memory:
        for name in ("dinner", "moving", "running"):
            memory.ingest(chats / f"{name}.json")
        answers = {q: memory.recall(q, answer="typed").answer for q in questions}
    spans = {q: (a.span if a is not None else None) or "" for q, a in answers.items()}
    assert "Northside Lymphoma Foundation" in spans["Why is Jordan running the Lakeshore 10K?"]
    assert spans["What is Jordan raising money for?"] == NOT_SURE or "Northside" in spans[questions[1]]
    assert spans["How much is the car repair?"] == "Four hundred"
    assert spans["Should Alex take Maya to Harbor Grill?"] == "Likely no"
    assert "Denver" in spans["Where is Nora moving to?"]
    assert not any("reservoir" in span or "movers" in span or "rest for" in span for span in spans.values())
    assert all(a is not None and a.sure == (a.span != NOT_SURE) for a in answers.values())


@pytest.mark.parametrize(
    ("question", "kind"),
    [
        ("By the way, where did I buy my new tennis racket from?", "where"),
        ("Also, when did I submit my research paper?", "when"),
        (
            "I'm looking back at our previous conversation about the Bajimaya case. Can you remind me what year the"
            " construction of the house began?",
            "when",
        ),
        ("I was wondering, who gave me a new stand mixer?", "who"),
        ("What's the phone number of the Speyer tourism board you gave me?", "what"),
        ("Would Caroline likely have Dr. Seuss books on her bookshelf?", "should"),
    ],
)
def test_a_lead_in_does_not_decide_the_question_type(question: str, kind: str) -> None:
    """The type comes from the asking sentence, after "Can you remind me" or "By the way,"."""
    assert question_type(question) == kind


def test_the_asked_part_of_a_long_question() -> None:
    """The last asking sentence, without its polite lead-in; an abbreviation does not end a sentence."""
    long = "I think we discussed jobs for seniors earlier. Can you remind me what was the 7th job in the list?"
    assert asked_part(long) == "what was the 7th job in the list?"
    assert asked_part("What areas of the U.S. has John been to?") == "What areas of the U.S. has John been to?"


def test_a_first_person_who_question_is_not_answered_with_a_speaker() -> None:
    """ "Who gave me…" in a chat with an assistant: neither the asker nor the assistant is the answer."""
    told = memory(1, "assistant", "A stand mixer is a lovely birthday gift!", "2023-05-01T10:00:00")
    found = typed_answer("Who gave me a new stand mixer as a birthday gift?", [told])
    assert found.span != "assistant"


def test_a_total_adds_up_the_amounts_of_every_memory_found() -> None:
    """ "How much in total": each amount once (an assistant's echo is the same amount), summed and cited."""
    day = "2023-05-01T10:00:00"
    evidence = [
        memory(1, "user", "I got a car wash yesterday, it was $25.", day),
        memory(2, "assistant", "A $25 car wash sounds reasonable.", day),
        memory(3, "user", "Ugh, I also got a parking ticket for $40 downtown.", day),
        memory(4, "user", "I bought a lamp for $90.", day),
    ]
    found = typed_answer("How much did I spend on the car wash and the parking ticket in total?", evidence)
    assert found.span == "$65"
    assert set(found.citations) == {1, 3}


def test_what_time_is_answered_with_the_clock_time_said_newest_first() -> None:
    """ "What time do I usually go to the gym?": the clock time, not the session's date; none said: not sure."""
    from ripplecli.answer.typed import typed_answer
    from ripplecli.trace import Evidence, SourceRef

    text = "I usually go to the gym at 6:00 pm after work."
    source = SourceRef("D1:1", "1", "user", text, "2023-05-01T10:00:00")
    gym = Evidence(1, f"user: {text}", 0.0, 1, ["D1:1"], [source])
    assert typed_answer("What time do I usually go to the gym?", [gym]).span == "6:00 pm"
    other = SourceRef("D2:1", "2", "user", "I go to the gym a lot these days.", "2023-05-01T10:00:00")
    vague = Evidence(2, "user: I go to the gym a lot these days.", 0.0, 1, ["D2:1"], [other])
    assert typed_answer("What time do I usually go to the gym?", [vague]).span != "1 May 2023"


def test_the_nth_item_of_a_numbered_list_a_turn_gave() -> None:
    """ "What was the 3rd job in the list you provided?": line 3 of the numbered list, up to its colon."""
    from ripplecli.answer.typed import typed_answer
    from ripplecli.trace import Evidence, SourceRef

    text = "Jobs for seniors:\n1. **Tutor**: teach online\n2. Pet sitter - walk dogs\n3. Transcriptionist: type"
    source = SourceRef("D1:2", "1", "assistant", text, "2023-05-01T10:00:00")
    listed = Evidence(1, f"assistant: {text}", 0.0, 1, ["D1:2"], [source])
    question = "I think we discussed jobs for seniors. Can you remind me what was the 3rd job in the list you provided?"
    assert typed_answer(question, [listed]).span == "Transcriptionist"
    assert typed_answer("What was the second job in the list?", [listed]).span == "Pet sitter"
    assert typed_answer("What was the 9th job in the list?", [listed]).span != "Transcriptionist"


def test_a_name_no_memory_holds_is_not_answered_about_another() -> None:
    """ "How often do I see Dr. Johnson?" when the chats tell of Dr. Smith: not found, saying which name; a name
    spelt nearly so, one word of a longer name, or a quoted title is no such name."""
    from ripplecli.answer.names import unmentioned_name
    from ripplecli.answer.typed import typed_answer
    from ripplecli.trace import Evidence, SourceRef

    text = "I see my therapist Dr. Smith every week, and I love LeBron and Xeonoblade."
    source = SourceRef("D1:1", "1", "user", text, "2023-05-01T10:00:00")
    seen = [Evidence(1, f"user: {text}", 0.0, 1, ["D1:1"], [source])]
    found = typed_answer("How often do I see Dr. Johnson?", seen)
    assert not found.found and "Johnson" in found.text
    assert typed_answer("How often do I see Dr. Smith?", seen).span == "every week"
    assert unmentioned_name("What do I like about Lebron James?", "what", seen) is None
    assert unmentioned_name("What is Xenoblade like?", "what", seen) is None
    assert unmentioned_name('When did I watch "Eternal Sunshine of the Spotless Mind"?', "what", seen) is None
