"""Write the hostile-input corpus for the chat readers: ok_* files must parse, bad_* files must be refused.

Deterministic: running it again rewrites the same bytes. Run from anywhere:
    python tests/fuzz/make_corpus.py
"""

from __future__ import annotations

import json
import random
from collections.abc import Callable
from datetime import datetime, timedelta
from pathlib import Path

HERE = Path(__file__).parent
SEED = 20260423


def turn(speaker: object = "Alex", text: object = "Hi there.", **extra: object) -> dict:
    """A native turn with overridable fields."""
    return {"speaker": speaker, "text": text, **extra}


def native(*sessions: list[dict], **top: object) -> dict:
    """A native document from lists of turns, one list per session."""
    start = datetime(2024, 1, 1, 10, 0)
    return {
        **top,
        "sessions": [
            {"timestamp": (start + timedelta(days=3 * n)).isoformat(), "turns": turns}
            for n, turns in enumerate(sessions)
        ],
    }


def chat(speaker_b_text: str = "Hello!") -> list[dict]:
    """Two ordinary turns."""
    return [turn("Alex", "Hi Sam."), turn("Sam", speaker_b_text)]


def stamped(*stamps: object) -> dict:
    """A native document with one two-turn session per timestamp."""
    return {"sessions": [{"timestamp": stamp, "turns": chat()} for stamp in stamps]}


def dumps(value: object, indent: int | None = 1) -> bytes:
    """JSON bytes as editors write them (UTF-8, non-ASCII kept)."""
    return json.dumps(value, ensure_ascii=False, indent=indent).encode()


def locomo(**conversation: object) -> list[dict]:
    """A one-sample LoCoMo file around the given conversation fields."""
    base = {
        "speaker_a": "Rosa",
        "speaker_b": "Ben",
        "session_1_date_time": "9:05 am on 3 June, 2023",
        "session_1": [
            {"speaker": "Rosa", "dia_id": "D1:1", "text": "Planted tomatoes today."},
            {"speaker": "Ben", "dia_id": "D1:2", "text": "Which kind?"},
        ],
    }
    return [{"sample_id": "fz", "conversation": {**base, **conversation}, "qa": []}]


def longmemeval(**entry: object) -> list[dict]:
    """A one-entry LongMemEval file around the given fields."""
    base = {
        "question_id": "fz-q",
        "haystack_dates": ["2023/05/20 (Sat) 02:21"],
        "haystack_sessions": [
            [{"role": "user", "content": "I adopted a beagle."}, {"role": "assistant", "content": "Congratulations!"}]
        ],
    }
    return [{**base, **entry}]


def gpt_node(node_id: str, parent: str | None, role: str, text: str) -> dict:
    """One ChatGPT mapping node holding a text message."""
    return {
        "id": node_id,
        "parent": parent,
        "children": [],
        "message": {"author": {"role": role}, "content": {"content_type": "text", "parts": [text]}, "recipient": "all"},
    }


def chatgpt(current: str = "m2", create_time: object = 1700000000.0, **mapping_overrides: object) -> list:
    """A ChatGPT export of one short thread; overrides replace or add mapping nodes."""
    mapping = {
        "r": {"id": "r", "parent": None, "children": ["m1"], "message": None},
        "m1": gpt_node("m1", "r", "user", "How long do I boil an egg?"),
        "m2": gpt_node("m2", "m1", "assistant", "About nine minutes for hard-boiled."),
    }
    return [
        {
            "title": "eggs",
            "id": "fz-gpt",
            "create_time": create_time,
            "current_node": current,
            "mapping": {**mapping, **mapping_overrides},
        }
    ]


# m1 without a message: the thread's only message is m2, so a broken m2 leaves nothing to read
GPT_BARE_M1 = {"id": "m1", "parent": "r", "children": ["m2"], "message": None}


def truncated(value: object, fraction: float) -> bytes:
    """A valid file cut off part-way, as an interrupted download leaves it."""
    data = dumps(value)
    return data[: int(len(data) * fraction)]


def random_bytes(count: int, seed: int) -> bytes:
    """Noise that is not text."""
    return random.Random(seed).randbytes(count)


WA_OK = "31/01/2024, 09:02 - Maya: Morning!\n31/01/2024, 09:05 - Alex: Hi Maya.\n"


def whatsapp(*lines: str) -> bytes:
    """A WhatsApp export of the given lines."""
    return "\n".join(lines).encode() + b"\n"


def tg_message(message_id: object = 1, text: object = "Hello", **extra: object) -> dict:
    """One Telegram message."""
    base = {"id": message_id, "type": "message", "date": "2024-03-02T10:00:00", "date_unixtime": "1709373600"}
    return {**base, "from": "Nora", "from_id": "user2", "text": text, **extra}


def telegram(*messages: dict, **chat: object) -> dict:
    """A one-chat Telegram export."""
    return {"name": "Nora", "type": "personal_chat", "id": 2, "messages": list(messages), **chat}


def claude_message(uuid: object = "m1", sender: object = "human", **extra: object) -> dict:
    """One Claude chat message with a text block."""
    base = {"uuid": uuid, "sender": sender, "created_at": "2024-04-02T08:00:05Z"}
    return {**base, "content": [{"type": "text", "text": "Plan my trip."}], **extra}


def claude(*messages: dict, **conversation: object) -> list:
    """A Claude export of one conversation."""
    return [{"uuid": "c1", "name": "trip", "chat_messages": list(messages), **conversation}]


def dc_message(message_id: object = "1", content: object = "Hello", **extra: object) -> dict:
    """One DiscordChatExporter message."""
    base = {"id": message_id, "type": "Default", "timestamp": "2024-04-20T18:01:00+02:00", "content": content}
    return {**base, "author": {"id": "5", "name": "lena", "nickname": "Lena"}, **extra}


def discord(*messages: dict, **top: object) -> dict:
    """A DiscordChatExporter channel."""
    return {
        "guild": {"id": "9", "name": "club"},
        "channel": {"id": "8", "name": "general"},
        "messages": list(messages),
        **top,
    }


def zipped(files: dict[str, bytes]) -> bytes:
    """A zip with fixed member times, so the bytes are the same on every run."""
    import io
    import zipfile

    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w") as archive:
        for name, data in files.items():
            archive.writestr(zipfile.ZipInfo(name, date_time=(2024, 1, 1, 0, 0, 0)), data)
    return buffer.getvalue()


SLACK_USERS = [{"id": "U1", "name": "alex", "profile": {"display_name": "Alex"}}]
SLACK_CHANNELS = [{"id": "C1", "name": "general"}]
DAY = "general/2024-01-15.json"
SLACK_DAY = [{"type": "message", "user": "U1", "text": "Launch on Thursday", "ts": "1705311000.000200"}]


def slack(files: dict[str, object] | None = None) -> bytes:
    """A zipped Slack export; `files` replace or add members by path."""
    members = {"users.json": SLACK_USERS, "channels.json": SLACK_CHANNELS, DAY: SLACK_DAY, **(files or {})}
    return zipped({k: v if isinstance(v, bytes) else dumps(v) for k, v in members.items() if v is not None})


GPT_ROOT = {"id": "r", "parent": None, "children": ["m1"], "message": None}


RTL = "مرحبا سام! غداً نذهب إلى المطعم. שלום, נתראה מחר \u200fבשמונה\u200f."
ZALGO = "H\u0335\u0321e\u0334\u0322l\u0337\u0328l\u0336\u0327o\u0338 w\u0489o\u0489r\u0489l\u0489d"

# Relative times that fall off the calendar (year 1 "last week", year 9999 "next week"): ungrounded, kept.
EDGE_PAST = [
    turn("Alex", "I adopted a cat last week."),
    turn("Sam", "Yesterday? Or three days ago? Last May, last summer, last Friday?"),
]
EDGE_FUTURE = [
    turn("Alex", "See you next week!"),
    turn("Sam", "Tomorrow, next month, next year, this weekend, on Friday, on the 15th, in three years."),
]
# Chat text that is rich markup, emoji codes and terminal escapes: every command must print it as text.
MARKUP_TEXT = (
    "See [link=http://evil.example]my photos[/link], [/unclosed] and [blink]this[/blink] [bold red]now[/bold red] "
    ":warning: \x1b[5mraw blink\x1b[0m \x1b]8;;http://evil.example\x07hidden\x1b]8;;\x07 \x9b31mcsi red \\"
)
RICH_MARKUP = {
    "conversation_id": "[blink]markup-chat[/blink]",
    "sessions": [
        {
            "id": "[/unclosed]",
            "timestamp": "2024-03-01T10:00:00",
            "turns": [
                turn("[bold red]Mallory", MARKUP_TEXT, id="[link=http://evil.example]t1[/link]"),
                turn("Alex", "[bold red]Alarm[/bold red] at Harbor Grill [/] [dim]x[/dim] \\[escaped] :smile:"),
                turn("Mallory", "Meet me in [link=http://evil.example]Lisbon[/link]", image_caption="[blink]a pic[/]"),
            ],
        }
    ],
}
CASES: dict[str, Callable[[], bytes]] = {
    # --- must be refused ---
    "bad_empty.json": lambda: b"",
    "bad_whitespace_only.json": lambda: b"  \n\t\n",
    "bad_truncated_native.json": lambda: truncated(native(chat(), chat()), 0.6),
    "bad_truncated_in_string.json": lambda: b'{"sessions": [{"turns": [{"speaker": "Alex", "text": "I was sa',
    "bad_truncated_locomo.json": lambda: truncated(locomo(), 0.8),
    "bad_trailing_comma.json": lambda: b'{"sessions": [{"turns": [{"speaker": "A", "text": "x"},]}]}',
    "bad_single_quotes.json": lambda: b"{'sessions': [{'turns': [{'speaker': 'A', 'text': 'x'}]}]}",
    "bad_comments.json": lambda: b'// exported\n{"sessions": []}',
    "bad_binary_noise.json": lambda: random_bytes(4096, SEED),
    "bad_binary_png.json": lambda: b"\x89PNG\r\n\x1a\n" + random_bytes(256, SEED + 1),
    "bad_gzip_payload.json": lambda: b"\x1f\x8b\x08\x00" + random_bytes(128, SEED + 2),
    "bad_latin1_bytes.json": lambda: (
        json.dumps(native(chat("Très bien, à demain")))
        .encode("latin-1")
        .replace(b"\\u00e8", "è".encode("latin-1"))
        .replace(b"\\u00e0", "à".encode("latin-1"))
    ),
    "bad_utf16.json": lambda: json.dumps(native(chat())).encode("utf-16"),
    "bad_invalid_utf8_surrogate.json": lambda: b'{"sessions": [{"turns": [{"speaker": "A", "text": "\xed\xa0\x80"}]}]}',
    "bad_raw_control_char.json": lambda: b'{"sessions": [{"turns": [{"speaker": "A", "text": "a\x01b"}]}]}',
    "bad_raw_nul_byte.json": lambda: b'{"sessions": [\x00]}',
    "bad_deep_arrays.json": lambda: b"[" * 50_000 + b"]" * 50_000,
    "bad_deep_objects.json": lambda: b'{"a":' * 30_000 + b"1" + b"}" * 30_000,
    "bad_deep_inside_turn.json": lambda: (
        b'{"sessions": [{"turns": [{"speaker": "A", "text": "x", "meta": ' + b"[" * 50_000 + b"]" * 50_000 + b"}]}]}"
    ),
    "bad_top_level_string.json": lambda: b'"just a string"',
    "bad_top_level_number.json": lambda: b"42",
    "bad_top_level_null.json": lambda: b"null",
    "bad_top_level_true.json": lambda: b"true",
    "bad_empty_list.json": lambda: b"[]",
    "bad_empty_object.json": lambda: b"{}",
    "bad_list_of_numbers.json": lambda: b"[1, 2, 3]",
    "bad_unknown_shape.json": lambda: dumps({"messages": [{"from": "A", "body": "hi"}]}),
    "bad_nan_literal.json": lambda: b'{"sessions": [{"timestamp": NaN, "turns": []}]}',
    "bad_infinity_literal.json": lambda: b'[{"id": "x", "create_time": Infinity, "mapping": {}}]',
    "bad_huge_integer.json": lambda: b'{"sessions": [{"id": ' + b"9" * 5000 + b', "turns": []}]}',
    "bad_native_sessions_not_list.json": lambda: dumps({"sessions": {"turns": chat()}}),
    "bad_native_sessions_null.json": lambda: dumps({"sessions": None}),
    "bad_native_session_is_string.json": lambda: dumps({"sessions": ["hello"]}),
    "bad_native_turns_missing.json": lambda: dumps({"sessions": [{"timestamp": None}]}),
    "bad_native_turns_is_object.json": lambda: dumps({"sessions": [{"turns": turn()}]}),
    "bad_native_turn_is_string.json": lambda: dumps(native(["Alex: hi", "Sam: hello"])),
    "bad_native_turn_is_null.json": lambda: dumps(native([turn(), None])),
    "bad_native_speaker_null.json": lambda: dumps(native(chat(), [turn(), turn(None, "who said this?")])),
    "bad_native_speaker_missing.json": lambda: dumps(native([{"text": "anonymous"}])),
    "bad_native_speaker_empty.json": lambda: dumps(native([turn("   ", "blank speaker")])),
    "bad_native_speaker_number.json": lambda: dumps(native([turn(7, "numbers are not names")])),
    "bad_native_speaker_object.json": lambda: dumps(native([turn({"name": "Alex"}, "nested speaker")])),
    "bad_native_text_null.json": lambda: dumps(native([turn("Alex", None)])),
    "bad_native_text_blank.json": lambda: dumps(native(chat(), [turn("Alex", " \n\t ")])),
    "bad_native_text_list.json": lambda: dumps(native([turn("Alex", ["hi", "there"])])),
    "bad_native_text_boolean.json": lambda: dumps(native([turn("Alex", True)])),
    "bad_native_caption_number.json": lambda: dumps(native([turn("Alex", "", image_caption=3)])),
    "bad_native_duplicate_turn_ids.json": lambda: dumps(native([turn(id="t1"), turn("Sam", "Yo", id="t1")])),
    "bad_native_duplicate_ids_across_sessions.json": lambda: dumps(native([turn(id="x")], [turn(id="x")])),
    "bad_native_id_collides_with_default.json": lambda: dumps(native([turn(id="D1:2"), turn("Sam", "Hey")])),
    "bad_native_turn_id_number.json": lambda: dumps(native([turn(id=17)])),
    "bad_native_duplicate_conversation_ids.json": lambda: dumps(
        [native(chat(), conversation_id="c"), native(chat(), conversation_id="c")]
    ),
    "bad_native_duplicate_session_ids.json": lambda: dumps(
        {"sessions": [{"id": "s", "turns": chat()}, {"id": "s", "turns": chat()}]}
    ),
    "bad_native_conversation_id_number.json": lambda: dumps(native(chat(), conversation_id=12)),
    "bad_native_list_with_string.json": lambda: dumps([native(chat()), "second conversation"]),
    "bad_native_no_turns_at_all.json": lambda: dumps({"sessions": [{"turns": []}, {"turns": []}]}),
    "bad_native_timestamp_garbage.json": lambda: dumps(stamped("last tuesday-ish")),
    "bad_native_timestamp_number.json": lambda: dumps(stamped(1700000000)),
    "bad_native_timestamp_feb30.json": lambda: dumps(stamped("2024-02-30T10:00:00")),
    "bad_native_timezone_offset_25h.json": lambda: dumps(stamped("2024-03-01T10:00:00+25:00")),
    "bad_native_timezone_name.json": lambda: dumps(stamped("2024-03-01T10:00:00 Europe/Berlin")),
    "bad_native_timezone_overflows_utc.json": lambda: dumps(stamped("0001-01-01T00:30:00+05:00")),
    "bad_native_year_10000.json": lambda: dumps(stamped("10000-01-01T00:00:00")),
    "bad_locomo_session_not_list.json": lambda: dumps(locomo(session_2="what a day")),
    "bad_locomo_conversation_not_object.json": lambda: dumps([{"sample_id": "x", "conversation": []}]),
    "bad_locomo_missing_dia_id.json": lambda: dumps(locomo(session_2=[{"speaker": "Ben", "text": "hi"}])),
    "bad_locomo_duplicate_dia_id.json": lambda: dumps(
        locomo(session_2=[{"speaker": "Ben", "dia_id": "D1:1", "text": "again"}])
    ),
    "bad_locomo_bad_date.json": lambda: dumps(locomo(session_1_date_time="25:99 pm on 40 Smarch, 2023")),
    "bad_locomo_caption_list.json": lambda: dumps(
        locomo(session_2=[{"speaker": "Ben", "dia_id": "D2:1", "text": "", "blip_caption": ["a"]}])
    ),
    "bad_longmemeval_dates_mismatch.json": lambda: dumps(longmemeval(haystack_dates=[])),
    "bad_longmemeval_role_unknown.json": lambda: dumps(
        longmemeval(haystack_sessions=[[{"role": "narrator", "content": "Once"}]])
    ),
    "bad_longmemeval_content_null.json": lambda: dumps(
        longmemeval(haystack_sessions=[[{"role": "user", "content": None}]])
    ),
    "bad_longmemeval_session_is_object.json": lambda: dumps(longmemeval(haystack_sessions=[{"role": "user"}])),
    "bad_longmemeval_bad_date.json": lambda: dumps(longmemeval(haystack_dates=["May 20th"])),
    "bad_chatgpt_parent_cycle.json": lambda: dumps(chatgpt(m1=gpt_node("m1", "m2", "user", "loop?"))),
    "bad_chatgpt_missing_parent.json": lambda: dumps(chatgpt(m1=gpt_node("m1", "gone", "user", "orphan"))),
    "bad_chatgpt_unknown_current_node.json": lambda: dumps(chatgpt(current="nowhere")),
    "bad_chatgpt_mapping_is_list.json": lambda: dumps([{"id": "x", "current_node": "a", "mapping": []}]),
    "bad_chatgpt_create_time_string.json": lambda: dumps(chatgpt(create_time="yesterday")),
    "bad_chatgpt_create_time_huge.json": lambda: dumps(chatgpt(create_time=1e300)),
    "bad_chatgpt_author_missing.json": lambda: dumps(  # every message unreadable: one alone would be skipped
        chatgpt(
            m1={"parent": "r", "message": {"content": {"content_type": "text", "parts": ["?"]}}},
            m2={"parent": "m1", "message": {"content": {"content_type": "text", "parts": ["?"]}}},
        )
    ),
    "ok_chatgpt_one_message_without_author.json": lambda: dumps(
        chatgpt(m2={"parent": "m1", "message": {"content": {"content_type": "text", "parts": ["?"]}}})
    ),
    # --- must parse ---
    "ok_native_minimal.json": lambda: dumps({"sessions": [{"turns": [turn()]}]}),
    "ok_native_list_without_ids.json": lambda: dumps([native(chat()), native(chat("Again!"))]),
    "ok_native_no_timestamps.json": lambda: dumps(stamped(None, None)),
    "ok_native_mixed_timezones.json": lambda: dumps(
        stamped("2024-03-01T10:00:00Z", "2024-03-01T10:00:00+05:30", "2024-03-01T10:00:00-08:00", "2024-03-01T10:00:00")
    ),
    "ok_native_future_dates.json": lambda: dumps(stamped("2999-12-31T23:59:59", "2150-06-01T08:00:00+14:00")),
    "ok_native_ancient_date.json": lambda: dumps(stamped("0001-01-01T00:00:00")),
    "ok_native_date_only.json": lambda: dumps(stamped("2024-03-01")),
    "ok_native_calendar_edge_first_day.json": lambda: dumps(
        {"sessions": [{"timestamp": "0001-01-01T00:00:00", "turns": EDGE_PAST}]}
    ),
    "ok_native_calendar_edge_last_day.json": lambda: dumps(
        {"sessions": [{"timestamp": "9999-12-31T23:00:00", "turns": EDGE_FUTURE}]}
    ),
    "ok_native_rich_markup.json": lambda: dumps(RICH_MARKUP),
    "ok_native_microseconds.json": lambda: dumps(stamped("2024-03-01T10:00:00.123456+00:00")),
    "ok_native_emoji.json": lambda: dumps(
        native([turn("Alex 🦊", "Pizza tonight? 🍕🍕 👩‍👩‍👧‍👦"), turn("Sam", "🎉" * 50)])
    ),
    "ok_native_right_to_left.json": lambda: dumps(native([turn("سام", RTL), turn("נועה", "כן! \u202eolleh\u202c")])),
    "ok_native_combining_marks.json": lambda: dumps(native([turn("Z", ZALGO), turn("Sam", "e\u0301 vs é")])),
    "ok_native_escaped_lone_surrogate.json": lambda: (
        b'{"sessions": [{"turns": [{"speaker": "A", '
        b'"text": "broken emoji \\ud83d here"}, {"speaker": "B", "text": "pair \\ud83d\\ude00 ok"}]}]}'
    ),
    "ok_native_escaped_controls.json": lambda: (
        b'{"sessions": [{"turns": [{"speaker": "A\\u0000", "text": "bell\\u0007 and nul\\u0000 and tab\\t"}]}]}'
    ),
    "ok_native_bom.json": lambda: b"\xef\xbb\xbf" + dumps(native(chat())),
    "ok_native_crlf.json": lambda: dumps(native(chat())).replace(b"\n", b"\r\n"),
    "ok_native_one_line.json": lambda: dumps(native(chat(), chat()), indent=None),
    "ok_native_ascii_escaped.json": lambda: json.dumps(native([turn("Zoë", "Ça va? 你好")])).encode(),
    "ok_native_extra_keys.json": lambda: dumps(
        {
            "version": 3,
            "meta": {"app": "x"},
            "sessions": [{"turns": [turn(reactions=["👍"], edited=True)], "location": "Lisbon"}],
        }
    ),
    "ok_native_image_only_turn.json": lambda: dumps(
        native([turn("Alex", "", image_caption="a red bicycle"), turn("Sam", "Nice bike!", image_caption=None)])
    ),
    "ok_native_empty_session_skipped.json": lambda: dumps({"sessions": [{"turns": []}, {"turns": chat()}]}),
    "ok_native_group_chat.json": lambda: dumps(
        native([turn(name, f"{name} here.") for name in ["Ana", "Bo", "Cy", "Di", "Ed", "Flo"]])
    ),
    "ok_native_long_turn.json": lambda: dumps(native([turn("Alex", "word " * 10_000)])),
    "ok_native_odd_ids.json": lambda: dumps(native([turn(id="turn one 🐙"), turn("Sam", "hi", id="D1:1")])),
    "ok_native_newlines_in_text.json": lambda: dumps(native([turn("Alex", "line one\nline two\n\nline four")])),
    "ok_native_padded_speaker.json": lambda: dumps(native([turn("  Alex  ", "  padded  ")])),
    "ok_native_duplicate_json_keys.json": lambda: (
        b'{"sessions": [{"turns": [{"speaker": "A", "speaker": "B", "text": "last key wins"}]}]}'
    ),
    "ok_native_deep_but_ignored.json": lambda: (
        b'{"sessions": [{"turns": [{"speaker": "A", "text": "x", "meta": ' + b"[" * 300 + b"]" * 300 + b"}]}]}"
    ),
    "ok_native_many_sessions.json": lambda: dumps(native(*[chat(f"Message {n}") for n in range(60)])),
    "ok_locomo_single_sample.json": lambda: dumps(locomo()[0]),
    "ok_locomo_dates_without_sessions.json": lambda: dumps(locomo(session_7_date_time="1:00 pm on 8 May, 2023")),
    "ok_locomo_sessions_out_of_order.json": lambda: dumps(
        locomo(
            session_10=[{"speaker": "Ben", "dia_id": "D10:1", "text": "tenth"}],
            session_2=[{"speaker": "Ben", "dia_id": "D2:1", "text": "second"}],
        )
    ),
    "ok_longmemeval_without_ids.json": lambda: dumps([{"haystack_sessions": [[{"role": "User", "content": "Hi"}]]}]),
    "ok_longmemeval_empty_content_skipped.json": lambda: dumps(
        longmemeval(
            haystack_sessions=[
                [{"role": "user", "content": "Anything on today?"}, {"role": "assistant", "content": ""}]
            ]
        )
    ),
    "ok_chatgpt_minimal.json": lambda: dumps(chatgpt()),
    "ok_chatgpt_edited_branch.json": lambda: dumps(
        chatgpt(
            current="m4",
            m3=gpt_node("m3", "m1", "user", "Actually, soft-boiled?"),
            m4=gpt_node("m4", "m3", "assistant", "Six minutes."),
        )
    ),
    "ok_chatgpt_null_create_time.json": lambda: dumps(chatgpt(create_time=None)),
    # --- WhatsApp .txt ---
    "bad_whatsapp_system_lines_only.txt": lambda: whatsapp(
        "31/01/2024, 08:58 - Messages and calls are end-to-end encrypted. Tap to learn more.",
        "31/01/2024, 09:00 - Alex added Sam",
    ),
    "bad_whatsapp_media_only.txt": lambda: whatsapp("31/01/2024, 09:06 - Alex: <Media omitted>"),
    "bad_whatsapp_february_30.txt": lambda: whatsapp(
        "30/02/2024, 09:02 - Maya: Morning!", "31/02/2024, 09:03 - Alex: Hi", "13/01/2024, 9:00 - A: b"
    ),
    "ok_whatsapp_one_impossible_date.txt": lambda: whatsapp(
        "30/02/2024, 09:02 - Maya: Morning!", "13/01/2024, 9:00 - A: b", "14/01/2024, 9:00 - B: c"
    ),
    "bad_whatsapp_hour_25.txt": lambda: whatsapp("31/01/2024, 25:02 - Maya: Morning!"),
    "bad_whatsapp_month_13_both_ways.txt": lambda: whatsapp("13/13/2024, 09:02 - Maya: Morning!"),
    "bad_whatsapp_year_first_day_32.txt": lambda: whatsapp("[2024-01-32, 09:02:00] Maya: Morning!"),
    "bad_whatsapp_latin1.txt": lambda: "31/01/2024, 09:02 - Zoë: Très bien\n".encode("latin-1"),
    "bad_whatsapp_utf16.txt": lambda: ("\ufeff" + WA_OK).encode("utf-16-le"),
    "bad_whatsapp_empty.txt": lambda: b"",
    "bad_whatsapp_other_log_form.txt": lambda: whatsapp("2024-01-31 09:02 Maya: Morning!", "2024-01-31 09:05 Alex: Hi"),
    "bad_whatsapp_huge_message.txt": lambda: whatsapp("31/01/2024, 09:02 - Maya: start", *["word " * 20_000] * 3),
    "bad_whatsapp_gzip.txt": lambda: b"\x1f\x8b\x08\x00" + random_bytes(64, SEED + 10),
    "ok_whatsapp_android.txt": lambda: WA_OK.encode(),
    "ok_whatsapp_ios_marks.txt": lambda: (
        "\u200e[1/5/24, 9:15:02\u202fPM] Sam: Hi\n[1/5/24, 9:16:40\u202fPM] Jo: Yo\n".encode()
    ),
    "ok_whatsapp_crlf_multiline.txt": lambda: WA_OK.replace("\n", "\r\n").encode() + b"second line\r\n",
    "ok_whatsapp_bom_12h.txt": lambda: (
        b"\xef\xbb\xbf" + whatsapp("2/3/24, 10:05 AM - Priya: Lunch?", "2/3/24, 1:06 PM - Ben: Sure")
    ),
    # --- Telegram ---
    "bad_telegram_messages_object.json": lambda: dumps(telegram() | {"messages": {"1": tg_message()}}),
    "bad_telegram_id_missing.json": lambda: dumps(
        {"name": "Nora", "type": "personal_chat", "messages": [tg_message()]}
    ),
    "bad_telegram_message_id_missing.json": lambda: dumps(
        telegram({k: v for k, v in tg_message().items() if k != "id"})
    ),
    "bad_telegram_date_garbage.json": lambda: dumps(telegram(tg_message(date="yesterday"))),
    "bad_telegram_date_missing.json": lambda: dumps(
        telegram({k: v for k, v in tg_message().items() if k not in ("date", "date_unixtime")})
    ),
    "ok_telegram_only_unixtime.json": lambda: dumps(
        telegram({k: v for k, v in tg_message().items() if k != "date"}, tg_message(2, "Bye"))
    ),
    "bad_telegram_unixtime_garbage.json": lambda: dumps(telegram(tg_message(date_unixtime="soon"))),
    "bad_telegram_duplicate_message_ids.json": lambda: dumps(  # most repeated: one repeat alone would be skipped
        telegram(tg_message(1), tg_message(1, "again"), tg_message(1, "and again"))
    ),
    "bad_telegram_chat_id_boolean.json": lambda: dumps(telegram(tg_message(), id=True)),
    "bad_telegram_text_number.json": lambda: dumps(telegram(tg_message(text=42))),
    "bad_telegram_entity_number.json": lambda: dumps(telegram(tg_message(text=["Hi ", 7]))),
    "bad_telegram_chats_list_object.json": lambda: dumps(
        {"personal_information": {"user_id": 1}, "chats": {"list": {}}}
    ),
    "bad_telegram_duplicate_chats.json": lambda: dumps(
        {"chats": {"list": [telegram(tg_message()), telegram(tg_message())]}}
    ),
    "bad_telegram_service_only.json": lambda: dumps(telegram(tg_message(type="service", action="pin_message"))),
    "ok_telegram_entities.json": lambda: dumps(telegram(tg_message(text=["Hi ", {"type": "bold", "text": "Nora"}]))),
    "ok_telegram_full_export.json": lambda: dumps(
        {
            "personal_information": {"user_id": 1},
            "chats": {"list": [telegram(tg_message(), tg_message(2, from_id="user1"))]},
        }
    ),
    # --- Claude ---
    "bad_claude_messages_object.json": lambda: dumps([{"uuid": "c1", "chat_messages": {"m1": claude_message()}}]),
    "bad_claude_uuid_missing.json": lambda: dumps([{"name": "trip", "chat_messages": [claude_message()]}]),
    "bad_claude_uuid_empty.json": lambda: dumps(claude(claude_message(uuid=""))),
    "bad_claude_sender_number.json": lambda: dumps(claude(claude_message(sender=1))),
    "bad_claude_content_string.json": lambda: dumps(claude(claude_message(content="Plan my trip."))),
    "bad_claude_block_text_number.json": lambda: dumps(claude(claude_message(content=[{"type": "text", "text": 3}]))),
    "bad_claude_created_at_garbage.json": lambda: dumps(claude(claude_message(created_at="last tuesday"))),
    "bad_claude_duplicate_message_uuid.json": lambda: dumps(
        claude(claude_message(), claude_message(sender="assistant"), claude_message(sender="assistant"))
    ),
    "bad_claude_duplicate_conversation_uuid.json": lambda: dumps(claude(claude_message()) * 2),
    "bad_claude_no_text.json": lambda: dumps(claude(claude_message(content=[{"type": "tool_use", "name": "x"}]))),
    "bad_claude_list_with_string.json": lambda: dumps([*claude(claude_message()), "conversation"]),
    "ok_claude_text_field_only.json": lambda: dumps(claude({"uuid": "m1", "sender": "human", "text": "Hi"})),
    "ok_claude_null_name_and_time.json": lambda: dumps(claude(claude_message(created_at=None), name=None)),
    # --- ChatGPT (more) ---
    "bad_chatgpt_no_current_node_no_text.json": lambda: dumps(
        [{"id": "c", "mapping": {"r": GPT_ROOT | {"children": []}}}]
    ),
    "bad_chatgpt_node_is_string.json": lambda: dumps([{"id": "c", "current_node": "m1", "mapping": {"m1": "hello"}}]),
    "bad_chatgpt_parts_string.json": lambda: dumps(
        chatgpt(
            m1=GPT_BARE_M1,
            m2=gpt_node("m2", "m1", "assistant", "x")
            | {"message": {"author": {"role": "assistant"}, "content": {"content_type": "text", "parts": "x"}}}
        )
    ),
    "bad_chatgpt_role_number.json": lambda: dumps(
        chatgpt(
            m1=GPT_BARE_M1,
            m2={
                "id": "m2",
                "parent": "m1",
                "message": {"author": {"role": 7}, "content": {"content_type": "text", "parts": ["x"]}},
            }
        )
    ),
    "bad_chatgpt_message_time_string.json": lambda: dumps(
        chatgpt(
            m1=GPT_BARE_M1,
            m2=gpt_node("m2", "m1", "assistant", "x")
            | {
                "message": {
                    "author": {"role": "assistant"},
                    "create_time": "noon",
                    "content": {"content_type": "text", "parts": ["x"]},
                }
            }
        )
    ),
    "ok_chatgpt_no_current_node.json": lambda: dumps([{k: v for k, v in chatgpt()[0].items() if k != "current_node"}]),
    # --- Discord ---
    "bad_discord_channel_missing.json": lambda: dumps({"guild": {"id": "9"}, "messages": [dc_message()]}),
    "bad_discord_channel_id_missing.json": lambda: dumps(discord(dc_message(), channel={"name": "general"})),
    "bad_discord_messages_object.json": lambda: dumps(discord(messages={"1": dc_message()})),
    "bad_discord_timestamp_garbage.json": lambda: dumps(discord(dc_message(timestamp="a while ago"))),
    "bad_discord_timestamp_missing.json": lambda: dumps(
        discord({k: v for k, v in dc_message().items() if k != "timestamp"})
    ),
    "bad_discord_author_missing.json": lambda: dumps(discord({k: v for k, v in dc_message().items() if k != "author"})),
    "bad_discord_author_name_empty.json": lambda: dumps(discord(dc_message(author={"id": "5", "name": ""}))),
    "bad_discord_duplicate_ids.json": lambda: dumps(
        discord(dc_message("1"), dc_message("1", "again"), dc_message("1", "and again"))
    ),
    "ok_discord_one_repeated_id.json": lambda: dumps(discord(dc_message("1"), dc_message("1", "again"))),
    "bad_discord_content_number.json": lambda: dumps(discord(dc_message(content=12))),
    "bad_discord_joins_only.json": lambda: dumps(discord(dc_message(type="GuildMemberJoin", content=""))),
    "bad_discord_id_object.json": lambda: dumps(discord(dc_message(message_id={"value": "1"}))),
    "ok_discord_minimal.json": lambda: dumps(discord(dc_message(), dc_message("2", "Reply!", type="Reply"))),
    # --- Slack (zipped export) ---
    "bad_slack_users_object.zip": lambda: slack({"users.json": {"U1": "alex"}}),
    "bad_slack_channels_object.zip": lambda: slack({"channels.json": {"C1": "general"}}),
    "bad_slack_channel_without_id.zip": lambda: slack({"channels.json": [{"name": "general"}]}),
    "bad_slack_day_not_json.zip": lambda: slack({DAY: b"[{'ts': 1}]"}),
    "bad_slack_day_object.zip": lambda: slack({DAY: {"messages": SLACK_DAY}}),
    "bad_slack_ts_garbage.zip": lambda: slack({DAY: [SLACK_DAY[0] | {"ts": "noon"}]}),
    "bad_slack_ts_missing.zip": lambda: slack({DAY: [{"type": "message", "user": "U1", "text": "x"}]}),
    "bad_slack_text_number.zip": lambda: slack({DAY: [SLACK_DAY[0] | {"text": 5}]}),
    "bad_slack_joins_only.zip": lambda: slack({DAY: [SLACK_DAY[0] | {"subtype": "channel_join"}]}),
    "bad_slack_day_latin1.zip": lambda: slack({DAY: '[{"ts": "1.0", "text": "très"}]'.encode("latin-1")}),
    "bad_slack_truncated.zip": lambda: slack()[:200],
    "bad_zip_media_only.zip": lambda: zipped({"photo.jpg": b"\xff\xd8\xff", "voice.opus": b"Opus"}),
    "ok_slack_minimal.zip": lambda: slack(),
    "ok_zip_of_chatgpt_and_user.zip": lambda: zipped({"conversations.json": dumps(chatgpt()), "user.json": b"{}"}),
    # --- notes ---
    "bad_notes_empty.md": lambda: b"",
    "bad_notes_blank_lines.md": lambda: b"\n\n   \n\t\n",
    "bad_notes_headings_only.md": lambda: b"# Title\n\n## Section\n",
    "bad_notes_front_matter_only.md": lambda: b"---\ntitle: Empty\ndate: 2024-01-01\n---\n",
    "bad_notes_date_garbage.md": lambda: b"---\ndate: the day after\n---\nA paragraph.\n",
    "bad_notes_date_impossible.md": lambda: b"---\ndate: 2024-13-45\n---\nA paragraph.\n",
    "bad_notes_latin1.md": lambda: "Un café à Porto.\n".encode("latin-1"),
    "bad_notes_utf16.txt": lambda: "\ufeffA note.\n".encode("utf-16-le"),
    "bad_notes_binary.md": lambda: random_bytes(512, SEED + 11),
    "bad_notes_huge_paragraph.md": lambda: ("word " * 50_000).encode(),
    "bad_notes_controls_only.txt": lambda: b"\x01\x02\x03\n\x04\x05\n",
    "ok_notes_front_matter.md": lambda: (
        b"---\ntitle: Trip\ndate: 2024-02-20\n---\n# Porto\n\nTrain on Friday.\n\nHostel by the river.\n"
    ),
    "ok_notes_plain.txt": lambda: "Call the dentist.\n\nPepper needs her vaccine. \U0001f436\n".encode(),
}


def main() -> None:
    """Rewrite every corpus file and remove stale ones."""
    for stale in HERE.glob("*_*.*"):
        if stale.name not in CASES and stale.suffix != ".py":
            stale.unlink()
    for name, make in CASES.items():
        (HERE / name).write_bytes(make())
    print(f"wrote {len(CASES)} files to {HERE}")


if __name__ == "__main__":
    main()
