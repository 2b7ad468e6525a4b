"""First/second-person words rewritten to names, so a restatement reads the same out of its chat."""

from __future__ import annotations

import re

from ripplecli.cues import STOPWORDS
from ripplecli.owner import is_role_word
from ripplecli.wording import plural_of

# Lower-cased phrase (straight apostrophes, single spaces) -> replacement; {me} is the speaker,
# {you} the other party and {we} both of them. Verb agreement is fixed only where it is cheap and sure.
_FIRST_PERSON = {
    "am i": "is {me}",
    "do i": "does {me}",
    "don't i": "doesn't {me}",
    "have i": "has {me}",
    "haven't i": "hasn't {me}",
    "i'm": "{me} is",
    "i am": "{me} is",
    "i've": "{me} has",
    "i have": "{me} has",
    "i haven't": "{me} hasn't",
    "i'll": "{me} will",
    "i'd": "{me} would",
    "i don't": "{me} doesn't",
    "i do": "{me} does",
    "i": "{me}",
    "me": "{me}",
    "myself": "{me}",
    "my": "{me}'s",
    "mine": "{me}'s",
}
_SECOND_PERSON = {
    "are you": "is {you}",
    "aren't you": "isn't {you}",
    "were you": "was {you}",
    "weren't you": "wasn't {you}",
    "have you": "has {you}",
    "haven't you": "hasn't {you}",
    "do you": "does {you}",
    "don't you": "doesn't {you}",
    "you're": "{you} is",
    "you are": "{you} is",
    "you were": "{you} was",
    "you've": "{you} has",
    "you have": "{you} has",
    "you'll": "{you} will",
    "you'd": "{you} would",
    "you don't": "{you} doesn't",
    "you": "{you}",
    "yourself": "{you}",
    "yourselves": "{you}",
    "your": "{you}'s",
    "yours": "{you}'s",
    "we're": "{we} are",
    "we've": "{we} have",
    "we'll": "{we} will",
    "we'd": "{we} would",
    "we": "{we}",
    "us": "{we}",
    "ourselves": "{we}",
    "our": "{we}'s",
    "ours": "{we}'s",
}
_REPLACEMENTS = _FIRST_PERSON | _SECOND_PERSON


def _phrase_pattern(phrase: str) -> str:
    """A regex for one phrase: any run of spaces between words, straight or curly apostrophes."""
    words = [re.escape(word).replace("'", "['’]") for word in phrase.split()]
    return r"\s+".join(words)


_ALTERNATIVES = "|".join(_phrase_pattern(p) for p in sorted(_REPLACEMENTS, key=len, reverse=True))
# Not inside a word ("Illinois", "determine"), not an initialism ("i.e.", "U.S."), not hyphenated.
_PRONOUN = re.compile(rf"(?<![\w'’])(?:{_ALTERNATIVES})(?![\w'’]|[.\-]\w)", re.IGNORECASE)
_KEEP_AS_IS = frozenset({"US", "ME"})  # the country, the state
# Adverbs that may stand between "I" and its verb ("I really need"), and words ending in -ly.
_ADVERB_WORDS = frozenset(
    "just also even still never always often sometimes kinda sorta only almost already first once then now soon".split()
)
_VERBS_IN_LY = frozenset("apply reply rely supply fly comply imply multiply ally bully".split())
_ADVERBS = "|".join([r"(?:sort|kind)\s+of", *sorted(_ADVERB_WORDS), r"[a-z]+ly"])
_VERB_AFTER = re.compile(rf"(?:\s+(?:{_ADVERBS})){{0,2}}\s+(?P<verb>[a-z]+(?:n['’]t)?)(?![\w'’-])")
# Verbs whose third person is not the regular one ("I really have", "I just don't").
_THIRD_PERSON = {"have": "has", "do": "does", "am": "is", "don't": "doesn't", "haven't": "hasn't"}
# A modal or an auxiliary right before "I": the verb after it keeps its form.
_AUXILIARY_BEFORE = re.compile(
    r"\b(?:can|could|will|would|shall|should|may|might|must|did|does|didn['’]t|doesn['’]t|won['’]t|"
    r"can['’]t|couldn['’]t|wouldn['’]t|shouldn['’]t)\s+$",
    re.IGNORECASE,
)
# "and"/"or" right before "I", and the clause before it back to its start: "Maya and I love" is a plural subject
# (a few words, no verb among them), "her birthday is on June 14th and I want" joins a new clause.
_JOINED_BEFORE = re.compile(
    r"(?:^|[.!?;:,]\s*|\b(?:but|so|because|when|if|that|then)\s+)(?P<before>[^.!?;:,]*?)\s*\b(?:and|or)\s+$",
    re.IGNORECASE,
)
_THIRD_PERSON_WORD = re.compile(r"\b(?:she|he|her|him|his)\b|\b(?:she|he)['’]", re.IGNORECASE)
_JOINED_NAME = re.compile(r"\b([A-Z][a-z]+) and (?:I|me)\b|\b(?:I|me) and ([A-Z][a-z]+)\b")
_CLAUSE_VERBS = frozenset("i is are was were am be been have has had do did went got get go said".split())
PLURAL_SUBJECT_WORDS = 3  # "Maya and I", "my wife and I": a subject joined to "I" is this short
_BASE_ED = frozenset("need feed bleed breed speed heed weed seed proceed succeed exceed embed".split())
# Past forms (irregular; regular ones end in -ed), forms that do not change, modals, auxiliaries, slang contractions
# and function words: none of them takes an -s after "I".
_NOT_BASE = frozenset(
    """arose awoke was were bore beat became began begun bent bid bit bled blew broke bred brought built burnt burst
    bought cast caught chose clung came cost crept cut dealt dug dove did done drew dreamt drank drunk drove dwelt ate
    fell fed felt fought found fled flung flew forbade forgot forgotten forgave froze got gotten gave given went gone
    ground grew grown hung had heard hid hit held hurt kept knelt knew known laid led leapt learnt left lent let lay
    lit lost made meant met mistook paid put quit read rode rang rose ran said saw seen sought sold sent set shook
    shed shone shot shrank shut sang sung sank sat slept slid slung slit smelt spoke spoken sped spelt spent spilt
    spun spat split spoilt spread sprang stood stole stuck stung stank strode struck strove swore sworn swept swam
    swung took taken taught tore told thought threw thrust trod understood undertook woke wore wove wed wept won
    wound withdrew wrung wrote written overcame overheard oversaw rebuilt redid remade retook rewrote upset been bet
    am is are be can could will would shall should may might must do does have has ought
    gonna gotta wanna dunno
    and or but nor as at by for from in into of off on onto out over than that the then to too up with without a an
    alone myself here there now so if not no yes again once ever twice""".split()
)
# Where a clause starts: the text's start, a sentence or clause mark, or a word that opens a clause.
_CLAUSE_START = re.compile(
    r"(?:^|[.!?;:,]|\b(?:and|but|so|or|if|when|whenever|because|cause|that|then|while|unless|since|as|until))\s*$",
    re.IGNORECASE,
)
# Words after a subject "you" that are not its verb ("you all", "you two", "you guys") or read as idioms ("you bet").
_AFTER_YOU = frozenset("all both two three four guys folks alone again bet".split())
_DETERMINER_BEFORE = re.compile(r"\b(?:a|the|this|that|gold|coal|salt|diamond)\s+$", re.IGNORECASE)
# Words someone else wrote keep their pronouns (their "I" is not the speaker): a quoted line ("> …" in Slack,
# Markdown and e-mail; Slack's ">>>" quotes the rest of the message), a code block or span, a passage in double
# quotes (straight, curly or guillemets).
_QUOTED = re.compile(
    r'^[ \t]*>>>[\s\S]*|^[ \t]*>[^\n]*|```[\s\S]*?(?:```|\Z)|`[^`\n]+`|"[^"]+"|“[^”]*”|«[^»]*»', re.MULTILINE
)


def _normalise(phrase: str) -> str:
    """The dictionary key of a matched phrase."""
    return " ".join(phrase.lower().replace("’", "'").split())


def resolve_references(text: str, speaker: str, other: str | None, we: bool = True) -> str:
    """Rewrite I/me/my to the speaker and, in a two-party chat (`other` given), you (and, unless `we` is False,
    we/us/our) to names; a present-tense verb right after a bare "I" takes the name's third person ("I need" ->
    "Alex needs")."""
    # An owner with no name yet ("Me", "User", "Human"): "I" and "you" stay, "Thanks, Me will book" reads worse.
    me = None if is_role_word(speaker) else speaker
    other = None if other is not None and is_role_word(other) else other
    names = {"me": me, "you": other, "we": f"{speaker} and {other}" if we and me and other else None}
    pieces: list[str] = []
    at = 0
    quoted = [span.span() for span in _QUOTED.finditer(text)]
    for match in _PRONOUN.finditer(text):
        if match.start() < at:
            continue  # inside a verb already rewritten
        if any(start <= match.start() < end for start, end in quoted):
            continue  # someone else's words, quoted
        resolved = _resolved(match, names, other)
        pieces += [text[at : match.start()], resolved]
        at = match.end()
        verb = _verb_after_subject(match) if resolved != match.group(0) else None
        if verb is not None:
            pieces.append(text[at : verb.start("verb")] + third_person(verb.group("verb")))
            at = verb.end()
    pieces.append(text[at:])
    return "".join(pieces)


def _partner_before(text: str, at: int) -> str | None:
    """The name joined to "I" earlier in the same sentence ("Lena and I went there for our anniversary"): the "we"
    after it is the two of them, not the two people chatting."""
    joined = _JOINED_NAME.search(text, _sentence_start(text, at), at)
    name = next(name for name in joined.groups() if name) if joined else None
    return name if name and name.lower() not in STOPWORDS else None  # not "Thanks and I hope we…"


def _third_person_before(text: str, at: int) -> bool:
    """A "she", "he" (or "her", "him", "his") earlier in the same sentence as a "we": that person may be in it."""
    return _THIRD_PERSON_WORD.search(text, _sentence_start(text, at), at) is not None


def _sentence_start(text: str, at: int) -> int:
    """Where the sentence holding `at` starts: after the last . ! or ? before it."""
    return max(text.rfind(mark, 0, at) for mark in ".!?") + 1


def _resolved(match: re.Match[str], names: dict[str, str | None], other: str | None) -> str:
    """One matched phrase written with names (kept as it is where it is not the pronoun)."""
    found = match.group(0)
    template = _REPLACEMENTS[_normalise(found)]
    if found in _KEEP_AS_IS or (other is None and "{me}" not in template):
        return found
    if names["me"] is None and "{me}" in template:
        return found
    if names["we"] is None and "{we}" in template:
        return found
    partner = _partner_before(match.string, match.start()) if "{we}" in template else None
    if partner:  # "Lena and I went there for our anniversary"
        names = {**names, "we": f"{partner} and {names['me']}"}
    elif "{we}" in template and _third_person_before(match.string, match.start()):
        return found  # "She's the one who got me into running, we used to jog": not the two who chat
    if (found == "i" and not _is_lowercase_pronoun(match)) or _is_noun_mine(match):
        return found
    resolved = template.format(**names)
    if template.startswith("{") or not found[0].isupper():
        return resolved  # a name keeps its own case: "I'll host" by "omar.h" is "omar.h will host", not "Omar.h"
    return resolved[0].upper() + resolved[1:]  # "Are you ok?" -> "Is Melanie ok?"


def _verb_after_subject(match: re.Match[str]) -> re.Match[str] | None:
    """The present-tense verb a bare subject "I" governs ("I really need"), or None: not after a modal or an
    auxiliary ("can I go", "did I say"), nor in "Maya and I love" (a plural subject). A "you" is a subject only
    where a clause starts ("If you want", "You look great"): elsewhere it is mostly an object ("I'll see you
    tomorrow")."""
    pronoun = _normalise(match.group(0))
    before = match.string[: match.start()]
    if pronoun not in ("i", "you") or _AUXILIARY_BEFORE.search(before):
        return None
    if pronoun == "you" and not _CLAUSE_START.search(before):
        return None
    if _joined_to_a_subject(before):
        return None
    verb = _VERB_AFTER.match(match.string, match.end())
    if verb is None or _PRONOUN.match(match.string, verb.start("verb")) or not is_base_verb(verb.group("verb")):
        return None
    if pronoun == "you" and verb.group("verb") in _AFTER_YOU:
        return None
    return verb


def _joined_to_a_subject(before: str) -> bool:
    """Whether the "I" that follows this text is part of a plural subject ("Maya and I"): "and"/"or" right before
    it and, back to the clause's start, a few words without a verb."""
    joined = _JOINED_BEFORE.search(before)
    if joined is None:
        return False
    words = joined.group("before").lower().split()
    if not words or all(w in STOPWORDS for w in words):  # "Thanks and I hope": no one is joined
        return False
    return len(words) <= PLURAL_SUBJECT_WORDS and not any(w in _CLAUSE_VERBS or w.endswith("ed") for w in words)


def is_base_verb(word: str) -> bool:
    """Whether a lower-case word after "I" reads as a present-tense verb: not a past form, a modal or
    auxiliary, an -ing form, an adverb, a function word or a word that already ends in a single s."""
    if _normalise(word) in _THIRD_PERSON:
        return True
    if word in _NOT_BASE or word in _ADVERB_WORDS or len(word) < 2 or word.endswith(("ing", "n't", "n’t")):
        return False
    if (word.endswith("ed") and word not in _BASE_ED) or (word.endswith("ly") and word not in _VERBS_IN_LY):
        return False
    return not (word.endswith("s") and not word.endswith("ss"))


def third_person(verb: str) -> str:
    """need -> needs, miss -> misses, try -> tries, go -> goes, have -> has, don't -> doesn't."""
    if _normalise(verb) in _THIRD_PERSON:
        return _THIRD_PERSON[_normalise(verb)].replace("'", "’" if "’" in verb else "'")
    if verb.endswith("o"):
        return verb + "es"  # go -> goes, where a noun's plural is photos
    return plural_of(verb)  # the same -s, -es, -ies as a noun's plural


def _is_lowercase_pronoun(match: re.Match[str]) -> bool:
    """A bare lower-case "i" is the pronoun only between spaces or at the text's edges (chat typing)."""
    text, start, end = match.string, match.start(), match.end()
    before_ok = start == 0 or text[start - 1].isspace()
    after_ok = end == len(text) or text[end].isspace() or text[end] in ",!?"
    return before_ok and after_ok


def _is_noun_mine(match: re.Match[str]) -> bool:
    """The noun in "the mine" or "a gold mine" is not the possessive pronoun."""
    is_mine = match.group(0).lower() == "mine"
    return is_mine and _DETERMINER_BEFORE.search(match.string, 0, match.start()) is not None
