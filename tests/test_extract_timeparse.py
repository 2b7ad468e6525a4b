"""Time grounding on the session timestamp: intervals, no false hits, nothing invented."""

from __future__ import annotations

import subprocess
import sys
from datetime import datetime

import pytest

from ripplecli.extract.timeparse import WARM_TEXT, find_expression, ground_time

SESSION = datetime(2023, 5, 8, 13, 56)  # a Monday: "1:56 pm on 8 May, 2023"
SESSION_DAY = (datetime(2023, 5, 8), datetime(2023, 5, 8, 23, 59, 59), False)


def days(first: tuple[int, int, int], last: tuple[int, int, int]) -> tuple[datetime, datetime, bool]:
    """A grounded interval from the start of one day to the end of another."""
    return datetime(*first), datetime(*last, 23, 59, 59), True


def test_yesterday_is_the_whole_previous_day() -> None:
    text = "I went to a LGBTQ support group yesterday"
    assert ground_time(text, SESSION) == days((2023, 5, 7), (2023, 5, 7))


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("I painted a lake last week", days((2023, 5, 1), (2023, 5, 7))),
        ("We ran a charity race last Friday", days((2023, 5, 5), (2023, 5, 5))),
        ("I moved here in May 2023", days((2023, 5, 1), (2023, 5, 31))),
        ("It was in May", days((2023, 5, 1), (2023, 5, 31))),
        ("We went camping last May", days((2022, 5, 1), (2022, 5, 31))),
        ("I adopted him two days ago", days((2023, 5, 6), (2023, 5, 6))),
        ("It happened a few days ago", days((2023, 5, 4), (2023, 5, 6))),
        ("I started three weeks ago", days((2023, 4, 17), (2023, 4, 23))),
        ("We visited last year", days((2022, 1, 1), (2022, 12, 31))),
        ("I'm moving next month", days((2023, 6, 1), (2023, 6, 30))),
        ("We went camping this weekend", days((2023, 5, 6), (2023, 5, 7))),
        ("We're going camping this weekend", days((2023, 5, 13), (2023, 5, 14))),
        ("I'm free this weekend", days((2023, 5, 13), (2023, 5, 14))),
        ("I took some time off this weekend", days((2023, 5, 6), (2023, 5, 7))),
        ("I took the train on Friday", days((2023, 5, 5), (2023, 5, 5))),
        ("I'll see you on Friday", days((2023, 5, 12), (2023, 5, 12))),
        ("I went there last night", days((2023, 5, 7), (2023, 5, 7))),
        ("I'm busy today", days((2023, 5, 8), (2023, 5, 8))),
        ("We met last summer", days((2022, 6, 1), (2022, 8, 31))),
        ("It opened in 2019", days((2019, 1, 1), (2019, 12, 31))),
        ("The party was on 20 April", days((2023, 4, 20), (2023, 4, 20))),
        ("It was on May 3rd", days((2023, 5, 3), (2023, 5, 3))),
        ("The movers come on May 28th", days((2023, 5, 28), (2023, 5, 28))),
        ("Will do. I went past Harbor Grill on Friday", days((2023, 5, 5), (2023, 5, 5))),
        ("I went there. Dinner on Friday, will you come?", days((2023, 5, 12), (2023, 5, 12))),
        ("Yes, the 14:30 on Wednesday. I found a hostel.", days((2023, 5, 10), (2023, 5, 10))),
        ("We met on Wednesday", days((2023, 5, 3), (2023, 5, 3))),
        ("Yes, two blocks away. Dinner there on Saturday?", days((2023, 5, 13), (2023, 5, 13))),
        ("My birthday is December 20th", days((2022, 12, 20), (2022, 12, 20))),
        ("We celebrated on May 28th", days((2022, 5, 28), (2022, 5, 28))),
        ("I signed up for the Lakeshore 10K on July 17th", days((2023, 7, 17), (2023, 7, 17))),
        ("We booked the cabin for June 3rd", days((2023, 6, 3), (2023, 6, 3))),
        ("I might sign up for a half marathon in the fall", days((2023, 9, 1), (2023, 11, 30))),
        ("I might have seen it last fall", days((2022, 9, 1), (2022, 11, 30))),
        ("I met my teammates on the 15th", days((2023, 4, 15), (2023, 4, 15))),
        ("We will meet on the 15th", days((2023, 5, 15), (2023, 5, 15))),
        ("Work has been crazy, we have a launch on the 12th.", days((2023, 5, 12), (2023, 5, 12))),  # ahead
        ("Work has been crazy, we had a launch on the 10th.", days((2023, 4, 10), (2023, 4, 10))),
        ("On the 3rd, we went hiking.", days((2023, 5, 3), (2023, 5, 3))),
        ("It was fun, the movers come on May 28th", days((2023, 5, 28), (2023, 5, 28))),
    ],
)
def test_relative_expressions_ground_on_the_session(text: str, expected: tuple) -> None:
    assert ground_time(text, SESSION) == expected


@pytest.mark.parametrize(
    "text",
    [
        "We went to the park",
        "you may want to try it",
        "May I ask something?",
        "the sun is out now",
        "one second, let me check",
        "Thanks, that means a lot!",
        "I have two kids and three dogs",
        "It will be your 3rd published movie!",
        "We were down 10 in the 4th and I hit the shot",
    ],
)
def test_text_without_a_real_expression_gets_the_session_day_ungrounded(text: str) -> None:
    assert ground_time(text, SESSION) == SESSION_DAY


def test_without_a_session_relative_time_stays_empty() -> None:
    assert ground_time("I went there yesterday", None) == (None, None, False)
    assert ground_time("We met last May", None) == (None, None, False)
    assert ground_time("Nothing temporal here", None) == (None, None, False)


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("The concert was on 8 May 2023", days((2023, 5, 8), (2023, 5, 8))),
        ("The concert was on May 8, 2023", days((2023, 5, 8), (2023, 5, 8))),
        ("The concert was on 2023-05-08", days((2023, 5, 8), (2023, 5, 8))),
        ("We met in June 2021", days((2021, 6, 1), (2021, 6, 30))),
    ],
)
def test_absolute_dates_ground_without_a_session(text: str, expected: tuple) -> None:
    assert ground_time(text, None) == expected


def test_first_expression_wins() -> None:
    text = "Yesterday I remembered our trip last year"
    assert ground_time(text, SESSION) == days((2023, 5, 7), (2023, 5, 7))


@pytest.mark.slow
def test_rare_expressions_fall_back_to_dateparser() -> None:
    start, end, grounded = ground_time("I got my first guitar twenty-five years ago", SESSION)
    assert grounded and start.year == 1998 and end.year == 1998


FIRST_DAY, LAST_DAY = datetime(1, 1, 1, 0, 0), datetime(9999, 12, 31, 23, 0)


@pytest.mark.parametrize(
    ("text", "session"),
    [
        ("I adopted a cat last week.", FIRST_DAY),
        ("It was yesterday", FIRST_DAY),
        ("We met last Friday", FIRST_DAY),
        ("I started three weeks ago", FIRST_DAY),
        ("We went camping last May", FIRST_DAY),
        ("We met last summer", FIRST_DAY),
        ("We visited last year", FIRST_DAY),
        ("See you next week!", LAST_DAY),
        ("I'm moving next month", LAST_DAY),
        ("We will meet tomorrow", LAST_DAY),
        ("We're going camping this weekend", LAST_DAY),
        ("in three years we retire", LAST_DAY),
        ("I'll see you on Friday", LAST_DAY),
        ("We will meet on the 15th", LAST_DAY),
    ],
)
def test_relative_time_past_the_calendar_edge_stays_ungrounded(text: str, session: datetime) -> None:
    """Year 1 "last week" or year 9999 "next week" has no date: the session day, not grounded, and no crash."""
    start, end, grounded = ground_time(text, session)
    assert (start, end, grounded) == (session.replace(hour=0), session.replace(hour=23, minute=59, second=59), False)


def test_question_time_past_the_calendar_edge_is_no_range() -> None:
    from ripplecli.recall.query import time_range

    assert time_range("What did Ana do next week?", LAST_DAY) is None
    assert time_range("What did Ana do last week?", FIRST_DAY) is None
    assert time_range("What did Ana do last week?", datetime(2023, 5, 10)) == (
        datetime(2023, 5, 1),
        datetime(2023, 5, 7, 23, 59, 59),
    )


@pytest.mark.slow
def test_warm_loads_dateparser_on_a_turn_the_rules_leave_to_it() -> None:
    assert find_expression(WARM_TEXT, SESSION) is None  # the rules leave it to dateparser
    code = (
        "import sys\nfrom ripplecli.extract import timeparse\n"
        "timeparse.warm()\nprint('dateparser.search' in sys.modules)"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert done.stdout.split() == ["True"]


def test_the_nth_weekday_of_a_month_is_that_day() -> None:
    from ripplecli.answer.spans import time_span

    said = datetime(2026, 5, 2, 18, 0)
    found = find_expression("Last Thursday of May, then.", said)
    assert found is not None and found[1][0] == datetime(2026, 5, 28)
    assert find_expression("the second Friday of March 2025", said)[1][0] == datetime(2025, 3, 14)
    assert time_span("Last Thursday of May, then.", said) == "28 May 2026"
    assert time_span("Last Thursday was fun", said) == "the Thursday before 2 May 2026"


@pytest.mark.parametrize(
    "text",
    [
        "The museum keeps the captain's letter from May 15, 18th-century ink and all.",
        'Found grandma\'s diary: "On May 15 we reached the harbour at dawn."',
        "Her letter begins “The storm broke on the 3rd of May” and goes on for pages.",
        "She read it out: «the fair opened in June, as every year».",
        "> On May 15 we landed at the harbour\nThat is from the book I told you about.",
        "The treaty was signed on May 15, 1789.",
        "In the 1700s the fair opened in May.",
        "Caesar was killed on March 15, 44 BC.",
        "The abbey burned in the winter, some time in the 12th century.",
    ],
)
def test_a_year_less_date_in_quoted_or_historical_text_stays_ungrounded(text: str) -> None:
    """Its words place the date in another time (a quoted passage, another age): not the year it was said in."""
    assert ground_time(text, SESSION) == SESSION_DAY


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ('She said "hello" and we met on May 3rd', days((2023, 5, 3), (2023, 5, 3))),
        ('The film "Past Lives" was on May 3rd', days((2023, 5, 3), (2023, 5, 3))),
        ("I rode a century on May 3rd", days((2023, 5, 3), (2023, 5, 3))),  # a hundred miles, not an age
        ('Her diary says "we landed on May 15, 2021"', days((2021, 5, 15), (2021, 5, 15))),
    ],
)
def test_a_date_beside_a_quote_or_with_its_own_year_still_grounds(text: str, expected) -> None:
    assert ground_time(text, SESSION) == expected
