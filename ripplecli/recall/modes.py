"""The recall modes by name: which views seed, how evidence grows, how it is ordered (no heavy imports: the CLI's
help and completion list them)."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Mode:
    """One retrieval variant: which views seed, how evidence grows, how it is ordered."""

    views: tuple[str, ...] = ("dense", "lexical", "cue")
    growth: str = "none"  # none | locality | expand | ripple | ripple+sessions | paper | ripple+cable | …
    order: str = "fusion"  # fusion | rho
    host: str = "none"  # none | antecedent: CABLE picks replace the lowest-ranked results (recall/cable.py)
    focus: bool = False  # the speaker the question is about first (assembly.speaker_first)
    share: bool = False  # the focus speaker's nearest memories by the question's vector get a share of the list
    sessions: bool = False  # sessions ranked as units seed too (recall/sessions.py: the fourth first-hop view)


MODES: dict[str, Mode] = {  # in this order in `ripple eval` reports and in help
    "dense": Mode(views=("dense",)),
    "lexical": Mode(views=("lexical",)),
    "seeds": Mode(),
    "seeds+contiguity": Mode(growth="locality"),
    "seeds+contiguity+focus": Mode(growth="locality", focus=True),  # the locality baseline with ripple's focus
    "expand": Mode(growth="expand"),
    "ripple": Mode(growth="ripple", focus=True, share=True),
    "ripple-noshare": Mode(growth="ripple", focus=True),  # ripple before the speaker's share (2026-12-01)
    # ripple with sessions as units (session view, session-local recall, list questions): measured, not the default
    "ripple+sessions": Mode(growth="ripple+sessions", focus=True, sessions=True, share=True),
    "ripple-paper": Mode(growth="paper", order="rho"),
    "dense+cable": Mode(views=("dense",), host="antecedent"),
    "seeds+cable": Mode(host="antecedent"),
    "ripple+cable": Mode(growth="ripple+cable", focus=True),
    "ripple+cable-nosub": Mode(growth="ripple+cable-nosub", focus=True),
}
# What `ripple ask --mode` offers: the default, the variants a person may choose (sessions as units; the antecedent
# links `ripple link cable` builds), and the baselines to compare with. The other modes are ablations, each taking
# one part of ripple away, for `ripple eval locomo --modes` (and the API).
ASK_MODES = ("ripple", "ripple+sessions", "ripple+cable", "seeds", "dense", "lexical")
