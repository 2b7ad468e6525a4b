"""Tokens: ASCII text is split by a small pattern that gives what the script-wide one gives, without compiling it."""

from __future__ import annotations

import random
import subprocess
import sys

from ripplecli import cues

ASCII = ["Don't forget Caroline's 10K!", "it's 'quoted' o'clock", "a b c 1 22", "", "x'y'z ' '", "MAYA—no"[:4]]


def test_ascii_text_gives_the_script_wide_patterns_tokens() -> None:
    rng = random.Random(3)
    texts = [*ASCII, *("".join(rng.choice("aZ9 '-.\t") for _ in range(rng.randint(0, 20))) for _ in range(3000))]
    for text in texts:
        assert text.lower().isascii()
        assert cues._ASCII_TOKEN.findall(text.lower()) == cues._token_pattern().findall(text.lower())


def test_a_letter_that_lowers_to_ascii_and_curly_apostrophes() -> None:
    assert cues.tokenize("\u212aiosk don’t") == ["kiosk", "don't"]  # the Kelvin sign lowers to k
    assert cues.content_tokens("Jordan’s races") == ["jordan", "race"]


def test_an_ascii_question_compiles_no_script_wide_pattern() -> None:
    code = (
        "from ripplecli import cues\n"
        "cues.content_tokens('What did Caroline research after the support group?')\n"
        "print(cues._token_pattern.cache_info().currsize, cues._cjk_pattern.cache_info().currsize)"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert done.stdout.split() == ["0", "0"]
