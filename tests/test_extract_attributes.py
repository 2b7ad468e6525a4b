"""The attribute ruler's fast equivalent against spaCy's own, through the real English pipeline."""

from __future__ import annotations

import pytest
from extract_helpers import locomo_conversation

from ripplecli.extract.attributes import compile_ruler
from ripplecli.extract.nlp import RULER, load_nlp, parse

pytestmark = pytest.mark.slow

# Every kind of rule the English ruler has: the tag map, LOWER IN lists, REGEX ("nothin'", "y'all"), two-token
# rules aimed at either token ("gon na", "got ta", "let 's", "ai n't"), DEP rules ("there is", pronoun objects)
# and the whitespace tokens' rules.
EDGE_TEXTS = [
    "I'm gonna go, y'all ain't coming? Gotta run.  Let's see,   c'mon!",
    "There is nothin' here and there are gets. He got it.\n\nIt is what it is; you gave it to me and I did it.",
    "Don't!  I  ain't sure whether that's so, tho. Y all know \t whatever.  Do it, have it, had it, does it.",
    "That one which? Those are mine; this is it. Ya'll  wanna? Nuthin'. Ain't nobody got time.",
]


def annotations(doc) -> list[tuple]:
    """What the ruler and the lemmatizer set, token by token."""
    return [(t.text, t.tag_, t.pos_, t.lemma_, t.dep_, t.head.i, str(t.morph)) for t in doc]


def texts_of(conversation_id: str) -> list[str]:
    """Every turn's text of a LoCoMo conversation."""
    conversation = locomo_conversation(conversation_id)
    return [turn.text for session in conversation.sessions for turn in session.turns]


@pytest.mark.parametrize("texts", [EDGE_TEXTS, texts_of("conv-26")], ids=["edge-cases", "conv-26"])
def test_same_annotations_as_spacys_ruler(texts: list[str]) -> None:
    nlp = load_nlp()
    reference = list(nlp.pipe(texts, disable=["ner"]))
    fast = parse(texts, [[] for _ in texts])
    assert [annotations(d) for d in fast] == [annotations(d) for d in reference]


def test_edge_texts_reach_the_rules_that_need_care() -> None:
    nlp = load_nlp()
    ruler = nlp.get_pipe(RULER)
    docs = nlp.pipe(EDGE_TEXTS, disable=["ner", RULER, "lemmatizer"])
    fired = {rule for doc in docs for rule, *_ in ruler.match(doc)}
    lengths = {rule: len(ruler.matcher.get(str(rule))[1][0]) for rule in fired}
    assert any(n == 2 and ruler.indices[rule] == 1 for rule, n in lengths.items())  # aimed at the second token
    assert any(n == 2 and ruler.indices[rule] == 0 for rule, n in lengths.items())
    patterns = [ruler.matcher.get(str(rule))[1][0] for rule in fired]
    assert any("REGEX" in str(p) for p in patterns) and any("DEP" in str(p) for p in patterns)
    assert any("IS_SPACE" in str(p) for p in patterns)


def test_a_pattern_it_cannot_evaluate_keeps_spacys_ruler() -> None:
    spacy = pytest.importorskip("spacy")
    ruler = spacy.blank("en").add_pipe("attribute_ruler")
    ruler.add([[{"LOWER": "hi", "OP": "+"}]], {"LEMMA": "hello"})
    assert compile_ruler(ruler) is None
    ruler = spacy.blank("en").add_pipe("attribute_ruler")
    ruler.add([[{"LOWER": "hi"}, {"IS_PUNCT": True}]], {"LEMMA": "hello"})
    assert compile_ruler(ruler) is None


def test_the_bare_tokenizer_loads_the_tokenizer_spacy_saved() -> None:
    spacy = pytest.importorskip("spacy")
    from ripplecli.extract.nlp import SPACY_MODEL, UNUSED_COMPONENTS

    ours = load_nlp()
    theirs = spacy.load(SPACY_MODEL, exclude=list(UNUSED_COMPONENTS))
    assert ours.tokenizer.to_bytes(exclude=["vocab"]) == theirs.tokenizer.to_bytes(exclude=["vocab"])
    texts = [*EDGE_TEXTS, *texts_of("conv-26")]
    assert [[t.text for t in ours.make_doc(x)] for x in texts] == [[t.text for t in theirs.make_doc(x)] for x in texts]
