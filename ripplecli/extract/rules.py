"""The fast default extractor: one memory per turn, with names resolved, entities, time and cue concepts."""

from __future__ import annotations

import re
from collections.abc import Collection, Iterable, Sequence
from typing import Any

from ripplecli.cues import STOPWORDS, canonical_name, unique
from ripplecli.extract import timeparse
from ripplecli.extract.concepts import TIME_WORDS, extract_concepts
from ripplecli.extract.nlp import parse
from ripplecli.extract.timeparse import ground_time
from ripplecli.model import MemoryDraft, Turn, Window, WindowTurn
from ripplecli.owner import ASSISTANT
from ripplecli.pronouns import resolve_references

LOCATION_ENTITIES = frozenset({"GPE", "LOC", "FAC"})
# Turns are parsed in passes of at most this many words (a longer turn alone). measured: a parsed spaCy doc holds
# ~6.4 KB a token (500 LongMemEval turns, 100,607 tokens: +644 MB); a 500-turn batch of them peaked an ingest at
# 1.27 GB. 10,000 words (~80 MB of parses) leave a LoCoMo batch (500 turns of ~22 words) in one or two passes.
PARSE_WORDS = 10_000
# An AI assistant's answer is parsed up to this many words (its names, chunks and keywords become cues; its time
# words, the names the chat knows, its BM25 terms and its passage vectors still come from all of it): assistant
# answers are ~87 % of an assistant chat's words. measured on 2 cores: a generated 1,500-message ChatGPT export
# 1,943 -> 2,590 words/s; LongMemEval dev (160) 59 min a run (was ~77), ripple full @10 .876 unchanged, @30 .952 ->
# .959, preference any@5 16 -> 15 of 20 (200 words: 15 too, each haystack ~4 s slower); LoCoMo has no assistant turns.
ASSISTANT_PARSE_WORDS = 100
_WORD = re.compile(r"\S+")
ParseJob = tuple[int, WindowTurn, str]  # (window index, the turn, the text spaCy reads: parsed_text)
# An ORG next to one of these words is a place people go to ("Pine Grill restaurant", "the Met museum").
_PLACE_WORDS = """restaurant grill cafe café bar pub diner bistro bakery park museum gallery school university
    college hospital clinic church temple mosque library theater theatre stadium arena mall store shop hotel zoo
    gym studio center centre club beach lake garden"""
PLACE_WORDS = frozenset(_PLACE_WORDS.split())
_CHAT_WORDS = "bye hey hi yo nah yeah yep yup wanna gonna congrats lol omg haha aww yay wow thanks"
# The English NER model reads other languages' capitalised months, weekdays and nouns as names.
_FOREIGN_TIME = """januar jänner februar märz mai juni juli oktober dezember montag dienstag mittwoch donnerstag
    freitag samstag sonntag janvier février mars avril juin juillet août septembre octobre novembre décembre lundi
    mardi mercredi jeudi vendredi samedi dimanche enero febrero marzo abril mayo junio julio agosto septiembre
    octubre noviembre diciembre lunes martes miércoles jueves viernes sábado domingo"""
NOT_NAMES = STOPWORDS | TIME_WORDS | frozenset(f"{_CHAT_WORDS} mon tues wed thurs fri sat sun {_FOREIGN_TIME}".split())
# A word after one of these articles is a noun ("die Wohnung", "le Marché"), not a person's name.
FOREIGN_ARTICLES = frozenset("der die das den dem des ein eine einen einem einer le la les une el los las".split())
# A name after "to"/"from" that a word of going governs ("the train to Porto", "back from Lyon") is where someone
# goes, and one after "in"/"near"… where something is: spaCy's small model tags some such towns PERSON.
_TOWARDS = frozenset("to from into toward towards".split())
_WITHIN = frozenset("in near around across throughout outside inside via".split())
_GOING = frozenset(
    """go come get travel fly move drive ride walk head return commute relocate arrive leave sail cruise emigrate
    immigrate trip train flight bus ferry ticket road way journey vacation holiday visit tour back""".split()
)
_POSSESSIVE = re.compile(r"['’]s?$")
_ARTICLE = re.compile(r"^the\s+", re.IGNORECASE)


class RulesExtractor:
    """Per-turn memories from regexes, spaCy NER/parsing and date arithmetic; no model download, no LLM."""

    def __init__(self, name: str = "rules") -> None:
        self.name = name

    def warm(self) -> None:
        """Load and run the spaCy pipeline and dateparser once, so a long-lived server's first write does not pay."""
        parse(["Alex met Maya in Paris yesterday."], [[]])
        timeparse.warm()

    def extract(self, window: Window) -> list[MemoryDraft]:
        """One draft per non-context turn of the window."""
        return self.extract_many([window])[0]

    def extract_many(self, windows: Sequence[Window]) -> list[list[MemoryDraft]]:
        """Drafts for many windows, parsing their turns in batched spaCy passes (much faster than one by one) of at
        most PARSE_WORDS words, each pass's parses dropped once drafted: memory does not grow with turn length."""
        fresh = [(i, placed) for i, window in enumerate(windows) for placed in window.turns if not placed.is_context]
        jobs = [(i, placed, parsed_text(placed.turn)) for i, placed in fresh]
        familiar = [[canonical_name(name) for name in windows[i].speakers] for i in range(len(windows))]
        assistants = [assistants_of(window) for window in windows]  # once a window, not once a turn
        drafts: list[list[MemoryDraft]] = [[] for _ in windows]
        for part in _by_words(jobs):
            docs = parse([text for _, _, text in part], [familiar[i] for i, _, _ in part])
            for (index, placed, _), doc in zip(part, docs, strict=True):
                drafts[index].append(self.draft(doc, placed, windows[index], assistants[index]))
        return drafts

    def restatements(self, windows: Sequence[Window]) -> list[str]:
        """What extract_many will restate, in its order, without parsing: the ingest starts encoding these while
        spaCy loads and parses."""
        texts: list[str] = []
        for window in windows:
            assistants = assistants_of(window)  # once a window, not once a turn
            texts += [restate(p.turn, window.speakers, assistants)[0] for p in window.turns if not p.is_context]
        return texts

    def draft(self, doc: Any, placed: WindowTurn, window: Window, assistants: Collection[str]) -> MemoryDraft:
        """The memory of one parsed turn; `assistants` are the window's AI speakers (assistants_of)."""
        turn = placed.turn
        restatement, addressee = restate(turn, window.speakers, assistants)
        persons = persons_in(doc, turn, addressee, window)
        start, end, grounded = ground_time(turn.text, placed.timestamp)
        concepts, forms = extract_concepts(doc, window.speakers)
        return MemoryDraft(
            restatement=restatement,
            source_turns=[turn.turn_id],
            persons=persons,
            locations=[place for place in locations_in(doc, window) if place not in persons],
            time_start=start,
            time_end=end,
            time_grounded=grounded,
            concepts=concepts,
            concept_forms=forms,
            extractor=self.name,
        )


def restate(turn: Turn, speakers: Sequence[str], assistants: Collection[str] = ()) -> tuple[str, str | None]:
    """A turn's restatement (its words with I/you resolved to names, after its speaker's name: the prefix measured
    +7 points of dense recall@30) and the other party when "you" was resolved to them (they are addressed).
    In a chat with an AI assistant "we" stays: the owner's "we" means someone else than the assistant."""
    other = other_party(turn.speaker, speakers)
    with_assistant = turn.speaker in assistants or other in assistants
    words = resolve_references(turn.text, turn.speaker, other, we=not with_assistant)
    addressed = other is not None and words.count(other) > turn.text.count(other)
    return f"{turn.speaker}: {words}", other if addressed else None


def parsed_text(turn: Turn) -> str:
    """What spaCy reads of a turn: all of it, or an assistant's first ASSISTANT_PARSE_WORDS words."""
    if turn.role != ASSISTANT:
        return turn.text
    for count, word in enumerate(_WORD.finditer(turn.text), start=1):
        if count == ASSISTANT_PARSE_WORDS:
            return turn.text[: word.end()]
    return turn.text


def _by_words(jobs: list[ParseJob]) -> Iterable[list[ParseJob]]:
    """Consecutive runs of jobs of at most PARSE_WORDS parsed words (a longer turn is a run of its own)."""
    part: list[ParseJob] = []
    words = 0
    for job in jobs:
        length = len(job[2].split())
        if part and words + length > PARSE_WORDS:
            yield part
            part, words = [], 0
        part.append(job)
        words += length
    if part:
        yield part


def assistants_of(window: Window) -> set[str]:
    """The speakers of the window's turns an AI assistant wrote."""
    return {placed.turn.speaker for placed in window.turns if placed.turn.role == ASSISTANT}


def other_party(speaker: str, speakers: Sequence[str]) -> str | None:
    """The one other speaker of a two-party chat; None when "you" could mean several people."""
    others = [name for name in speakers if name != speaker]
    return others[0] if len(speakers) == 2 and len(others) == 1 else None


def clean_name(text: str) -> str:
    """An entity's text without a trailing possessive or a leading "the"."""
    return _ARTICLE.sub("", _POSSESSIVE.sub("", text.strip())).strip()


def looks_like_person(name: str) -> bool:
    """NER tags pronouns, letters, greetings and dates as PERSON too; a real name is capitalised words."""
    words = name.split()
    capitalised = bool(words) and all(word[:1].isupper() for word in words)
    noise = any(word.lower() in NOT_NAMES for word in words)
    return len(name) > 1 and capitalised and not noise and any(c.isalpha() for c in name)


def mentions(text: str, name: str) -> bool:
    """The name appears as a whole word (case-sensitive: names are written capitalised)."""
    # `in` first: most known names are absent from most turns, and the substring test is far cheaper than the regex
    return bool(name) and name in text and re.search(rf"(?<!\w){re.escape(name)}(?!\w)", text) is not None


def speaker_nickname(name: str, speakers: Iterable[str]) -> str:
    """Map a shortened speaker name ("Mel") to the speaker ("Melanie"), else keep the name."""
    key = canonical_name(name)
    matches = [s for s in speakers if len(key) >= 3 and canonical_name(s).startswith(key)]
    return matches[0] if len(matches) == 1 else name


def persons_in(doc: Any, turn: Turn, addressed: str | None, window: Window) -> list[str]:
    """Canonical participants: speaker, party addressed, people NER names in the parse and known persons in the
    whole turn."""
    people = [ent for ent in doc.ents if ent.label_ == "PERSON" and not _after_article(ent)]
    named = [clean_name(ent.text) for ent in people if not is_placed(ent, window)]
    found = [turn.speaker, addressed or ""]
    found += [speaker_nickname(name, window.speakers) for name in named if looks_like_person(name)]
    found += [name for name in [*window.known_persons, *window.speakers] if mentions(turn.text, name)]
    return unique(canonical_name(name) for name in found)


def _after_article(ent: Any) -> bool:
    """A German, French or Spanish article right before the entity: a capitalised noun, not a name."""
    return ent.start > 0 and ent.doc[ent.start - 1].lower_ in FOREIGN_ARTICLES


def _is_venue(ent: Any) -> bool:
    """An organisation that is a venue: a place word inside it or right beside it."""
    if ent.label_ != "ORG":
        return False
    doc = ent.doc
    beside = [doc[i] for i in (ent.start - 1, ent.end) if 0 <= i < len(doc)]
    return any(token.lower_ in PLACE_WORDS for token in [*ent, *beside])


def is_placed(ent: Any, window: Window) -> bool:
    """A PERSON entity that stands where a place does: the object of "in"/"near"… or of "to"/"from" after a
    word of going, not possessive ("to Maya's"), a capitalised name and not a speaker (or a speaker's nickname) or
    a person the chat already knows."""
    if ent.label_ != "PERSON" or ent.start == 0:
        return False
    doc = ent.doc
    before = doc[ent.start - 1]
    if ent.end < len(doc) and doc[ent.end].lower_ in ("'s", "’s", "'", "’"):
        return False
    name = clean_name(ent.text)
    if not looks_like_person(name) or speaker_nickname(name, window.speakers) != name:
        return False
    if canonical_name(name) in {canonical_name(known) for known in [*window.speakers, *window.known_persons]}:
        return False
    if before.lower_ in _WITHIN:
        return True
    governors = [before.head, *(child for child in before.head.children if child.dep_ == "dobj")]  # "book the train"
    return before.lower_ in _TOWARDS and any(word.lemma_.lower() in _GOING for word in governors)


def locations_in(doc: Any, window: Window) -> list[str]:
    """Canonical places named in the text (never invented: empty when NER finds none)."""
    places = [ent for ent in doc.ents if ent.label_ in LOCATION_ENTITIES or _is_venue(ent) or is_placed(ent, window)]
    return unique(canonical_name(clean_name(ent.text)) for ent in places)
