"""The library face of ripple: open a store, ingest, recall, stats. The CLI and MCP server call only this."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ripplecli.config import Settings, data_home, force_offline
from ripplecli.errors import InputError, StoreError
from ripplecli.inputs import naive_utc, parse_date, parse_memory_id, parse_time, utc_offset, wall_time
from ripplecli.own_data import StoreUpkeep, settings_of
from ripplecli.recall.modes import ASK_MODES, MODES
from ripplecli.registry import (
    ANSWER_MODES,
    EVAL_ANSWERS,
    EXTRACTORS,
    FORMATS,
    LINKS,
    LONGMEMEVAL_TYPES,
    PLANNERS,
    QUERY_ANALYZERS,
)
from ripplecli.wording import counted

if TYPE_CHECKING:  # the store, the write path (numpy, graph), recall and answers load only when used: `--help` lists
    # the choices above without them
    from ripplecli.answer.base import AnswerStream, ModelProvider
    from ripplecli.formats.load import Member, Reading  # noqa: F401  (Member: the annotation cli/ingest.py reads)
    from ripplecli.formats.stream import StreamedFile
    from ripplecli.ingest import IngestReport, Progress
    from ripplecli.local_models import FoundModel
    from ripplecli.model import Conversation
    from ripplecli.model_catalog import Chosen, Pulled
    from ripplecli.protocols import LLM, Encoder
    from ripplecli.recall.pipeline import Recaller
    from ripplecli.runtime.encoders import EncoderLoading
    from ripplecli.trace import RecallResult

REMEMBER_CONVERSATION = "mcp"  # where turns told to an assistant go by default
MAX_REMEMBER_TURNS = 50  # remember() is for a few turns; whole chats go through ingest()
# The library face: the store, turns to remember, the agent's compact result, parsing what users type, and what a
# command line asks besides a store (the names it offers, the local model, the config file, counts in words).
__all__ = [
    "ANSWER_MODES",
    "ASK_MODES",
    "EVAL_ANSWERS",
    "EXTRACTORS",
    "FORMATS",
    "LINKS",
    "LONGMEMEVAL_TYPES",
    "MODES",
    "PLANNERS",
    "QUERY_ANALYZERS",
    "Memory",
    "NewTurn",
    "compact_result",
    "counted",
    "default_owner_name",
    "escape_c1",
    "is_role_word",
    "naive_utc",
    "parse_date",
    "parse_memory_id",
    "parse_time",
]


@dataclass(frozen=True)
class NewTurn:
    """One utterance to remember: who said what, and when (None: now), as an assistant hears it."""

    speaker: str
    text: str
    timestamp: datetime | None = None


class Memory(StoreUpkeep):
    """One ripple store: `Memory(path).ingest("chat.json")`, `.recall("question")`, `.stats()`."""

    def __init__(
        self,
        path: str | Path | None = None,
        *,
        read_only: bool = False,
        create: bool = True,
        model: str | Path | None = None,
    ):
        from ripplecli.store.db import Store

        force_offline()
        self.path = Path(path).expanduser() if path else data_home()
        self.store = Store.open(self.path, create=create and not read_only, read_only=read_only)
        self.settings = settings_of(self.store.get_meta("settings"))  # what the store was built with
        self.model = model  # a GGUF path; None: $RIPPLE_MODEL or the config file (ripplecli.local_models)
        self._encoder: Encoder | None = None
        self._encoder_loading: EncoderLoading | None = None
        self._recaller: Recaller | None = None
        self._llm: LLM | None = None

    def close(self, failing: bool = False) -> None:
        """Release the store (and its lock); `failing`: a failure is on its way, and nothing raised here hides it."""
        self.store.close(failing)

    def __enter__(self) -> Memory:
        return self

    def __exit__(self, kind: object, *exc: object) -> None:
        self.close(failing=kind is not None)

    # --- configuration ------------------------------------------------------------------------
    def configure(self, settings: Settings) -> None:
        """Choose encoder/extractor/graph parameters for a store that has no memories yet."""
        if self.store.count("memories"):
            raise StoreError(f"store {self.path}: already has memories; settings are fixed at creation")
        self.settings = settings

    @property
    def encoder(self) -> Encoder:
        """The encoder named in the settings, loaded on first use (never on commands that don't encode)."""
        if self._encoder is None:
            self._encoder = self._loaded_encoder()
        return self._encoder

    @encoder.setter
    def encoder(self, encoder: Encoder) -> None:
        """Use another encoder giving the same vectors (the evaluation's per-question cache wraps the real one)."""
        self._encoder = encoder

    def _loaded_encoder(self) -> Encoder:
        """The encoder started by load_encoder_soon, else loaded now."""
        loading, self._encoder_loading = self._encoder_loading, None
        if loading is not None:
            return loading.result()
        from ripplecli.runtime.encoders import load_encoder

        return load_encoder(self.settings.encoder_backend, self.settings.encoder_model)

    def load_encoder_soon(self) -> None:
        """Start loading the encoder on a second thread, for a command that will encode after other start-up work
        (imports, reading a file or the store): the two overlap instead of taking turns."""
        if self._encoder is None and self._encoder_loading is None:
            from ripplecli.runtime.encoders import load_encoder_soon

            self._encoder_loading = load_encoder_soon(self.settings.encoder_backend, self.settings.encoder_model)

    def _record_settings(self) -> None:
        """Write settings and encoder identity into meta on first ingest (inside a transaction)."""
        if self.store.get_meta("settings") is None:
            with self.store.transaction():
                self.store.set_meta("settings", self.settings.to_dict())
                self.store.set_meta("encoder_name", self.encoder.name)
                self.store.set_meta("encoder_dim", int(self.encoder.dim))

    @property
    def llm(self) -> LLM:
        """The local model (--model, $RIPPLE_MODEL or the config file), loaded on first use; ModelError if none."""
        if self._llm is None:
            from ripplecli.local_models import load_llm

            self._llm = load_llm(self.model)
        return self._llm

    def _extractor(self, name: str | None):
        """The extractor chosen by name from the registry (the LLM one gets the configured model)."""
        from ripplecli.registry import EXTRACTORS

        return EXTRACTORS.create(name or self.settings.extractor, lambda: self.llm)

    # --- write ------------------------------------------------------------------------------
    def ingest(
        self,
        path: str | Path,
        *,
        fmt: str = "auto",
        extractor: str | None = None,
        progress: Progress | None = None,
        links: str | None = None,
        conversations: Sequence[Conversation] | None = None,
        owner: str | None = None,
        default_owner: str | None = None,
        stream: StreamedFile | None = None,
    ) -> IngestReport:
        """Ingest a chat file (or its already parsed `conversations`, or the big export `stream` read_export checked);
        a bad file raises InputError, writes nothing. A big export is read a chunk of conversations at a time, and
        a rerun after a kill adds only what the killed run had not committed.

        `owner`: the name the owner's turns are stored under (default: `me` in the config, else `default_owner`, else
        the export's own name for them, e.g. "User"); the report says which name was used. `owner` (or `me`) also
        names the owner of a chat whose export does not say who it is (a group chat): the person of that name."""
        path = Path(path)
        self.load_encoder_soon()  # beside reading and checking the file
        if conversations is None and stream is None:
            reading = read_export(path, fmt)
            conversations, stream = reading.conversations, reading.stream
        chosen = dict(extractor=extractor, progress=progress, links=links, owner=owner, default_owner=default_owner)
        if stream is not None:
            from ripplecli.ingest import FileSummary

            whole = FileSummary(stream.conversations, stream.turns, stream.witnesses)
            ingestor = self._ingestor(stream.witnesses, **chosen)  # type: ignore[arg-type]
            return ingestor.ingest_chunks(stream.chunks(), str(path), _file_hash(path), whole)
        return self.ingest_conversations(
            conversations or [], label=str(path), content_hash=_file_hash(path), **chosen  # type: ignore[arg-type]
        )

    def ingest_conversations(
        self,
        conversations: Sequence[Conversation],
        *,
        label: str = "<api>",
        content_hash: str = "",
        extractor: str | None = None,
        progress: Progress | None = None,
        links: str | None = None,
        owner: str | None = None,
        default_owner: str | None = None,
    ) -> IngestReport:
        """Ingest already parsed conversations (used by the API, the evaluation and MCP); `links="cable"` adds CABLE.
        `owner` and `default_owner` as in ingest."""
        ingestor = self._ingestor(conversations, extractor, progress, links, owner, default_owner)
        return ingestor.ingest(conversations, label, content_hash)

    def _ingestor(
        self,
        conversations: Sequence[Conversation],
        extractor: str | None,
        progress: Progress | None,
        links: str | None,
        owner: str | None,
        default_owner: str | None,
    ):
        """The write phase for this store, its extractor and linker loaded (a model that cannot load fails here,
        before any write); `conversations` (or a big file's witnesses) say whether the owner is to be named."""
        self.load_encoder_soon()
        chosen = self._extractor(extractor)
        linker = self._linker(links)
        owner = owner_name(conversations, owner)
        self._record_settings()
        from ripplecli.ingest import Ingestor

        return Ingestor(self.store, self.settings, self.encoder, chosen, progress, linker, owner, default_owner)

    def _linker(self, links: str | None, **params: Any):
        """The CABLE linker for `links` ("cable": rules, "cable-llm": the configured model), or None."""
        if links in (None, "none"):
            return None
        from ripplecli.graph.cable import CableLinker, CableParams
        from ripplecli.registry import LINKS

        if links not in LINKS:
            raise InputError(f"unknown --links '{links}' (choose from: none, {', '.join(LINKS)})")
        chosen = CableParams(**{**LINKS[links], **params})
        needs_model = "llm" in (chosen.querier, chosen.verifier)
        return CableLinker(self.store, self.encoder, chosen, self.llm if needs_model else None)

    def link(self, links: str = "cable", *, progress: Progress | None = None, **params: Any):
        """Build antecedent links for every memory that has none yet (resumable; `ripple link cable`)."""
        self._writable()
        linker = self._linker(links, **params)
        return linker.backfill(progress)

    def remember(
        self,
        turns: NewTurn | Sequence[NewTurn],
        *,
        conversation: str = REMEMBER_CONVERSATION,
        session: str | None = None,
    ) -> list[int]:
        """Write a few turns an assistant was told through the normal write path; returns the new memory ids."""
        self._writable()
        batch = [turns] if isinstance(turns, NewTurn) else list(turns)
        chat = self._remembered(batch, conversation, session)
        report = self.ingest_conversations([chat], label=f"<remember {chat.conversation_id}>")
        from ripplecli.store import queries

        return queries.memory_ids_of_run(self.store, report.run_id)

    def _remembered(self, batch: list[NewTurn], conversation: str, session: str | None) -> Conversation:
        """The turns as a Conversation: sessions named by their date (or `session`), ids the next free D<s>:<n>."""
        from ripplecli.formats.fields import clean_text
        from ripplecli.model import Conversation, Session, Turn
        from ripplecli.store import queries

        check_turns(batch, conversation, session)
        taken = queries.turn_ids(self.store, conversation.strip())
        sessions: dict[str, Session] = {}
        for new in batch:
            given = new.timestamp or datetime.now().replace(microsecond=0)  # now: the local clock, no zone
            stamp, offset = naive_utc(given), utc_offset(given)
            name = session.strip() if session else wall_time(given).date().isoformat()  # the day where it was said
            turn_id = next_turn_id(name, taken)
            taken.add(turn_id)
            sessions.setdefault(name, Session(name, stamp, [], offset)).turns.append(
                Turn(turn_id, clean_text(new.speaker), clean_text(new.text), said_at=stamp, offset=offset)
            )
        return Conversation(conversation.strip(), list(sessions.values()))

    # --- read -------------------------------------------------------------------------------
    def stats(self) -> dict[str, Any]:
        """Graph and store statistics (`ripple graph stats`); never loads the encoder."""
        from ripplecli.graph.stats import graph_stats

        return graph_stats(self.store)

    def recall(
        self,
        question: str,
        *,
        k: int = 30,
        mode: str = "ripple",
        rounds: int = 1,
        as_of: datetime | None = None,
        answer: str = "none",
        planner: str = "rules",
        analyzer: str = "rules",
        stream: AnswerStream | None = None,
    ) -> RecallResult:
        """Associative recall: evidence, the trace of how it was found, and optionally an answer.

        `planner` and `analyzer` ("rules" or "llm") choose independently where the local model is used; a model's
        answer is handed to `stream` piece by piece as it is written."""
        if mode != "lexical":  # every other mode encodes the question
            self.load_encoder_soon()
        from ripplecli.answer import answer_for
        from ripplecli.recall.pipeline import Recaller, RecallParams
        from ripplecli.recall.query import as_owner
        from ripplecli.registry import PLANNERS, QUERY_ANALYZERS
        from ripplecli.runtime.llm import CallLog

        if answer not in ANSWER_MODES:
            raise InputError(f"unknown answer mode '{answer}' (choose from: {', '.join(ANSWER_MODES)})")
        log = CallLog()
        chosen_planner = PLANNERS.create(planner, lambda: self.llm, log)
        chosen_analyzer = QUERY_ANALYZERS.create(analyzer, lambda: self.llm, log)
        if self._recaller is None:
            self._recaller = Recaller(self.store, lambda: self.encoder)
        when = wall_time(as_of) if as_of else None  # "yesterday" is read on the asker's clock, as days were lived
        params = RecallParams(k=k, mode=mode, rounds=rounds, as_of=when)
        result = self._recaller.recall(question, params, chosen_analyzer, chosen_planner)
        owner = result.trace.query_cues.owner  # "What did I ask…" is answered as "What did Jane Doe ask…"
        asked = as_owner(question, owner) if owner else question
        today = when or datetime.now()  # the day "how long ago" counts back from, as recall reads the question
        result.answer = answer_for(answer, asked, result.evidence, self._model_provider(answer), log, stream, today)
        if log.calls:
            result.trace.llm_calls = log.to_list()
        return result

    def _model_provider(self, answer: str) -> ModelProvider:
        """The local model as the answerer sees it: configured or not, loaded only if it is used."""
        from ripplecli.answer.base import NO_MODEL, ModelProvider

        if answer not in ("auto", "llm"):
            return NO_MODEL
        from ripplecli.local_models import resolve_model
        from ripplecli.model_catalog import rules_when_sure

        chosen = resolve_model(self.model)
        return ModelProvider(chosen is not None, lambda: self.llm, bool(chosen and rules_when_sure(chosen[0])))

    def warm(self) -> None:
        """Load the encoder, the extractor's models and every index now, so a long-lived server (MCP) pays them
        once at start, not on its first `remember` or `recall`."""
        self.encoder.encode(["warm up"])
        if hasattr(self.encoder, "warm_sharing"):  # the one-core session a write encodes on while spaCy parses
            self.encoder.warm_sharing()
        self._warm_extractor()
        if self.store.count("memories"):
            self.recall("warm up", k=1)
            if self._recaller is not None:  # made by that recall
                self._recaller.warm()  # a server answers many questions: hold the recall maps whole from the start

    def _warm_extractor(self) -> None:
        """Load the store's extractor's models (spaCy for the rules one); one that needs the local model stays lazy."""
        from ripplecli.registry import EXTRACTORS

        if self.store.read_only or getattr(EXTRACTORS.load(self.settings.extractor), "needs_llm", False):
            return  # a read-only server never writes; a GGUF model costs memory a server that only recalls never needs
        extractor = self._extractor(None)
        warm = getattr(extractor, "warm", None)
        if warm is not None:
            warm()


def owner_name(conversations: Sequence[Conversation], given: str | None) -> str | None:
    """The owner's name for conversations that mark owner turns, or whose export leaves `me` to name the owner
    among their people (a group chat): given, else `me` from the config, else None."""
    from ripplecli.owner import owner_speaker

    if owner_speaker(conversations) is None and not any(c.owner_by_name for c in conversations):
        return None
    if given and given.strip():
        return " ".join(given.split())
    from ripplecli.local_models import load_config

    configured = load_config().get("me")
    return configured if isinstance(configured, str) and configured.strip() else None


# --- remember: turns told to an assistant ----------------------------------------------------------
def read_chat(path: str | Path, fmt: str = "auto") -> list[Conversation]:
    """A chat file's conversations, checked whole before anything is written."""
    return read_export(path, fmt, stream=False).conversations


def read_export(path: str | Path, fmt: str = "auto", stream: bool = True) -> Reading:
    """read_chat, and for a zip or folder which of its files were read as what and which were passed over. With
    `stream`, a big export (a heavy user's ChatGPT conversations.json, a Telegram account) is checked record by
    record and comes as `Reading.stream`, for `Memory.ingest(path, stream=...)`: no file is held whole."""
    from ripplecli.formats.load import read_input

    return read_input(Path(path), fmt, stream=stream)


def check_turns(batch: Sequence[NewTurn], conversation: str, session: str | None) -> None:
    """A remember call names a conversation and brings 1..MAX turns, each with a speaker and some text."""
    from ripplecli.formats.fields import MAX_TEXT_CHARS, clean_text

    if not batch:
        raise InputError("no turns to remember")
    if len(batch) > MAX_REMEMBER_TURNS:
        raise InputError(f"{len(batch)} turns: remember at most {MAX_REMEMBER_TURNS} at once (ingest a file instead)")
    if not conversation.strip() or (session is not None and not session.strip()):
        raise InputError("the conversation and session names must not be empty")
    for number, new in enumerate(batch, start=1):
        for field_name in ("speaker", "text"):
            value = getattr(new, field_name)
            cleaned = clean_text(value) if isinstance(value, str) else ""
            if not cleaned:
                raise InputError(f"turn {number}: the {field_name} is empty")
            if len(cleaned) > MAX_TEXT_CHARS:  # the limit a chat file's turn has (formats/fields.py)
                raise InputError(
                    f"turn {number}: the {field_name} is {len(cleaned):,} characters long; "
                    f"ripple takes at most {MAX_TEXT_CHARS:,} a turn"
                )


def next_turn_id(session: str, taken: set[str]) -> str:
    """The next free turn id D<session>:<n> of a conversation (ids stay unique even after a forget)."""
    prefix = f"D{session}:"
    number = sum(t.startswith(prefix) for t in taken) + 1
    while f"{prefix}{number}" in taken:
        number += 1
    return f"{prefix}{number}"


# --- recall, compact: what an agent reads ------------------------------------------------------------
# The MCP `recall` result is the `ripple ask --json` document made small, under the same names: evidence with its
# dated sources and provenance (no turn texts), the trajectory as ids, and the rules' answer as a hint.
COMPACT_EVIDENCE = ("memory_id", "rank", "restatement", "sources", "conversation_id", "title", "said_at", "refers_to")
COMPACT_SOURCE = ("turn_id", "session_id", "speaker", "said_at")  # said_at: the time where it was said
COMPACT_CUES = ("persons", "locations", "concepts", "time_range")
COMPACT_ANSWER = ("method", "type", "span", "text", "citations", "found", "sure")


def compact_result(result: RecallResult) -> dict[str, Any]:
    """Evidence with dated sources and how each was found, plus the trajectory in brief: small enough for a prompt."""
    document = result.to_dict()
    evidence = document["evidence"]
    return {
        "question": document["question"],
        "mode": document["mode"],
        "k": document["k"],
        "seconds": round(document["seconds"], 4),
        "evidence": [_compact_evidence(e) for e in evidence],
        "trajectory": trajectory(document["trace"], evidence),
        "answer": brief_answer(document["answer"]),
    }


def _compact_evidence(entry: dict[str, Any]) -> dict[str, Any]:
    """One evidence entry without the source turns' texts and the memory's cues."""
    brief = {key: entry[key] for key in COMPACT_EVIDENCE}
    brief["sources"] = [{key: source[key] for key in COMPACT_SOURCE} for source in entry["sources"]]
    brief["provenance"] = entry["provenance"]
    return brief


def brief_answer(answer: dict[str, Any] | None) -> dict[str, Any] | None:
    """The rules' answer as an agent reads it: its type, span, line and citations (the agent's model decides)."""
    return None if answer is None else {key: answer[key] for key in COMPACT_ANSWER}


def trajectory(trace: dict[str, Any], evidence: list[dict[str, Any]]) -> dict[str, Any]:
    """Query cues, seeds, anchors, the missing-support target and which channel found which evidence; no texts."""
    brief: dict[str, Any] = {
        "query_cues": {key: trace["query_cues"][key] for key in COMPACT_CUES},
        "seeds": {view: [row["id"] for row in rows] for view, rows in trace.get("seeds", {}).items()},
        "rounds": [_round_brief(record) for record in trace.get("rounds", [])],
        "found_by": found_by(evidence),
    }
    for key in ("focus", "note"):
        if key in trace:
            brief[key] = trace[key]
    return brief


def _round_brief(record: dict[str, Any]) -> dict[str, Any]:
    """One planner round: decision, anchors, target sentence, missing cues, support ids per channel."""
    plan = record["planner"]
    return {
        "round": record["round"],
        "decision": plan["decision"],
        "anchors": [anchor["id"] for anchor in plan["anchors"]],
        "target": plan["target"]["restatement"] if plan["target"] else None,
        "missing": plan["missing"],
        "support": {channel: [s["id"] for s in found] for channel, found in record.get("support", {}).items()},
        "stopped": record.get("stopped"),
    }


def found_by(evidence: list[dict[str, Any]]) -> dict[str, list[int]]:
    """Evidence ids per finder: a seeding view (dense, lexical, cue), a graph channel, or 'fusion' (ranked deeper)."""
    finders: dict[str, list[int]] = {}
    for e in evidence:
        names = {p["channel"] if "channel" in p else p["view"] for p in e["provenance"] if "channel" in p or p["seed"]}
        for name in sorted(names) or ["fusion"]:
            finders.setdefault(name, []).append(e["memory_id"])
    return finders


def _file_hash(path: Path) -> str:
    """Content hash of an ingested file (imported late: the write path is heavy)."""
    from ripplecli.ingest import file_hash

    return file_hash(path)


# --- what a command asks of the library besides a store ---------------------------------------------
def start_encoder(*, few: bool = False) -> None:
    """Start loading the default encoder on a second thread now, for a command that will encode: it loads beside the
    command's imports and the store's opening (the store's own settings then find it under way). `few`: one question
    to encode, so a lighter session does (runtime.encoders.load_encoder_soon)."""
    from ripplecli.runtime.encoders import load_encoder_soon

    load_encoder_soon(if_ready=True, few=few)


def check_format(fmt: str) -> None:
    """Refuse an unknown --format before any file is opened."""
    from ripplecli.formats.load import check_format as check

    check(fmt)


def load_model(model: str | Path | None = None) -> None:
    """Load the local model (--model, $RIPPLE_MODEL or the config file) now: an unusable one is a ModelError before
    a store is touched, and the store's later use finds it loaded."""
    from ripplecli.local_models import load_llm

    load_llm(model)


def unopenable_report(store: str | Path | None, failure: StoreError) -> dict[str, Any]:
    """`ripple doctor`'s report on a store whose database file DuckDB cannot open at all (`store`: its folder)."""
    from ripplecli.own_data import unopenable_report as report

    return report(store, failure)


def config_path() -> Path:
    """Where the config file is ($RIPPLE_CONFIG or the user config dir)."""
    from ripplecli.local_models import config_path as path

    return path()


def load_config() -> dict[str, Any]:
    """Every key the config file sets."""
    from ripplecli.local_models import load_config as load

    return load()


def set_config(key: str, value: str | None) -> dict[str, Any]:
    """Set one key (None: remove it), checked before the file is written; the settings as written."""
    from ripplecli.local_models import set_config as write

    return write(key, value)


def config_value(key: str) -> Any:
    """One key's value (None when unset); an unknown key is an InputError."""
    from ripplecli.local_models import config_value as value

    return value(key)


def models_overview(model: str | Path | None = None) -> dict[str, Any]:
    """The recommended models, where pulled ones go, the configured model and the GGUF files found (read from their
    headers, not loaded), and the places searched: `ripple models --json`."""
    from ripplecli.config import models_home
    from ripplecli.local_models import configured_model, search_dirs
    from ripplecli.model_catalog import catalogue_rows

    configured = configured_model(model)
    return {
        "catalogue": catalogue_rows(configured["path"] if configured else None),
        "models_dir": str(models_home()),
        "configured": configured,
        "models": [m.to_dict() for m in found_models()],
        "searched": [{"source": label, "path": str(path)} for label, path in search_dirs()],
    }


def found_models() -> list[FoundModel]:
    """The GGUF files on this machine, read from their headers."""
    from ripplecli.local_models import discover

    return discover()


def pull_model(name: str | None = None, progress: Callable[[int, int], None] | None = None) -> Pulled:
    """Download a recommended model (sha256-checked, resumable) and configure it: the only use of the network."""
    from ripplecli.model_catalog import pull

    return pull(name, progress)


def use_model(target: str) -> Chosen:
    """Configure a pulled name, a .gguf path or a found model's name, once it is checked usable."""
    from ripplecli.model_catalog import use

    return use(target)


def model_tip(model: str | Path | None = None) -> str | None:
    """The one line that tells a person without a local model how to get one (None: nothing to tell, or told)."""
    from ripplecli.model_catalog import model_tip as tip

    return tip(model)


def tip_shown() -> None:
    """Remember that the model tip was shown, so it is shown once per user."""
    from ripplecli.model_catalog import tip_shown as shown

    shown()


def default_owner_name(conversations: Sequence[Conversation]) -> str | None:
    """The name an export gives the owner's turns (its own name for them, or a role word like "User"), if any."""
    from ripplecli.owner import default_owner_name as default

    return default(conversations)


def is_role_word(name: str) -> bool:
    """Whether a name is an export's word for its owner ("me", "user", "human") rather than a person's name."""
    from ripplecli.owner import is_role_word as role_word

    return role_word(name)


def escape_c1(text: str) -> str:
    """JSON text with DEL and the C1 controls escaped too: a document printed on a terminal cannot drive it."""
    from ripplecli.files import escape_c1 as escape

    return escape(text)


def answer_stream(
    started: Callable[[str, int], None], token: Callable[[str], None], finished: Callable[[], None]
) -> AnswerStream:
    """Where a model's answer goes while it is written: `started(model, prompt tokens)`, each piece, the end."""
    from ripplecli.answer.base import AnswerStream

    return AnswerStream(started, token, finished)


def gib(size: int) -> str:
    """A file size for people."""
    from ripplecli.runtime.gguf_info import gib as in_gib

    return in_gib(size)
