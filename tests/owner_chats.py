"""Chats with the store's owner and an AI assistant, and a Chinese one: the owner, time and language tests."""

from __future__ import annotations

import json
from pathlib import Path

ASKED = "I am reading about the history of the Caribbean. Who profited from the sugar trade?"
ANSWERED = (
    "The sugar trade shaped the Caribbean islands completely. Sugar plantations spread over Barbados and Jamaica, "
    "the sugar trade made planters and merchants in Europe rich, and the sugar trade depended on enslaved labour. "
    "Sugar exports, sugar prices and sugar refineries tied the islands to the Atlantic sugar trade."
)
OWNER_CHAT = {
    "conversation_id": "c0ffee-1234",
    "title": "Sugar trade history",
    "sessions": [
        {
            "id": "s1",
            "timestamp": "2024-03-02T10:00:00",
            "turns": [
                {"id": "m1", "speaker": "User", "role": "owner", "text": ASKED, "said_at": "2024-03-02T10:00:05"},
                {
                    "id": "m2",
                    "speaker": "ChatGPT",
                    "role": "assistant",
                    "text": ANSWERED,
                    "said_at": "2024-03-02T10:00:40",
                },
                {
                    "id": "m3",
                    "speaker": "User",
                    "role": "owner",
                    "said_at": "2024-03-02T10:07:00",
                    "text": "Yesterday I visited a rum distillery in Bridgetown with my brother Theo.",
                },
                {
                    "id": "m4",
                    "speaker": "ChatGPT",
                    "role": "assistant",
                    "said_at": "2024-03-02T10:07:30",
                    "text": "Bridgetown's distilleries grew out of the old sugar estates.",
                },
            ],
        }
    ],
}
CHINESE_CHAT = {
    "conversation_id": "family-zh",
    "title": "家里的事",
    "sessions": [
        {
            "id": "1",
            "timestamp": "2024-05-01T20:00:00",
            "turns": [
                {"speaker": "李雷", "text": "我的猫叫小白，它今年三岁了。"},
                {"speaker": "韩梅梅", "text": "我下个月要去上海出差。"},
                {"speaker": "李雷", "text": "The weather in Berlin was rainy all week."},
                {"speaker": "韩梅梅", "text": "我最喜欢的菜是北京烤鸭。"},
            ],
        }
    ],
}


def write(path: Path, document: dict) -> Path:
    """A native chat file."""
    path.write_text(json.dumps(document, ensure_ascii=False), encoding="utf-8")
    return path
