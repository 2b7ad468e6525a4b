"""Forget memories completely: rows in every table, derived indexes, and the bytes DuckDB keeps in free blocks."""

from __future__ import annotations

from dataclasses import dataclass, field

from ripplecli.cues import content_tokens
from ripplecli.store.browse import MemoryFilter, selected_ids
from ripplecli.store.db import REWRITE_OWED, Store
from ripplecli.store.schema import CUE_TABLES

IDS = "(SELECT unnest(?::BIGINT[]))"
# What a memory owns: table -> the condition that ties a row to the forgotten memory ids.
OWNED: dict[str, str] = {
    "edges": f"src IN {IDS} OR dst IN {IDS}",
    "vectors": f"memory_id IN {IDS}",
    "passages": f"memory_id IN {IDS}",
    "memory_persons": f"memory_id IN {IDS}",
    "memory_locations": f"memory_id IN {IDS}",
    "memory_cues": f"memory_id IN {IDS}",
    "provenance": f"memory_id IN {IDS}",
    "memories": f"memory_id IN {IDS}",
}


@dataclass
class ForgetPlan:
    """What a forget removes: the memory and source ids, and row counts per kind."""

    memory_ids: list[int]
    source_ids: list[int]
    counts: dict[str, int] = field(default_factory=dict)

    @property
    def empty(self) -> bool:
        """Nothing matched."""
        return not self.memory_ids and not self.source_ids


def plan_forget(store: Store, selection: MemoryFilter, keep_sources: bool = False) -> ForgetPlan:
    """Select what would go, without changing anything (the confirmation shows these counts)."""
    memory_ids = selected_ids(store, selection)
    source_ids = [] if keep_sources else _orphaned_sources(store, selection, memory_ids)
    counts = {"memories": len(memory_ids), "sources": len(source_ids)}
    for table in ("edges", "vectors", "provenance"):
        counts[table] = _count(store, table, OWNED[table], memory_ids)
    counts["cues"] = sum(_count(store, table, OWNED[table], memory_ids) for table, _ in CUE_TABLES.values())
    return ForgetPlan(memory_ids, source_ids, counts)


def forget(store: Store, selection: MemoryFilter, keep_sources: bool = False) -> ForgetPlan:
    """Delete the selection in one transaction, rebuild the derived indexes, then rewrite the database file."""
    plan = plan_forget(store, selection, keep_sources)
    if plan.empty:
        return plan
    with store.transaction():
        store.keep_high_water("memories", "memory_id")
        store.keep_high_water("sources", "source_id")
        _delete(store, plan)
        store.bump("memories")  # the lexical index and recall's in-memory index reload
        store.bump("vectors")  # the hnswlib index is rebuilt without the forgotten vectors
        store.set_meta(REWRITE_OWED, {"memories": len(plan.memory_ids), "sources": len(plan.source_ids)})
    store.rewrite()
    return plan


def _delete(store: Store, plan: ForgetPlan) -> None:
    """Rows owned by the memories, then their sources and whatever only they referenced."""
    ids = plan.memory_ids
    held = store.con.execute(f"SELECT DISTINCT cue FROM memory_cues WHERE {OWNED['memory_cues']}", [ids])
    cues = [r[0] for r in held.fetchall()]
    for table, condition in OWNED.items():
        store.con.execute(f"DELETE FROM {table} WHERE {condition}", [ids] * condition.count("?"))
    if plan.source_ids:
        runs = f"(SELECT DISTINCT run_id FROM sources WHERE source_id IN {IDS})"
        store.con.execute(f"DELETE FROM failures WHERE run_id IN {runs}", [plan.source_ids])  # may quote the text
        store.con.execute(f"DELETE FROM provenance WHERE source_id IN {IDS}", [plan.source_ids])
        store.con.execute(f"DELETE FROM sources WHERE source_id IN {IDS}", [plan.source_ids])
    store.con.execute("DELETE FROM cue_forms WHERE cue NOT IN (SELECT DISTINCT cue FROM memory_cues)")
    _delete_unsaid_forms(store, cues)
    store.con.execute(
        "DELETE FROM conversations WHERE conversation_id NOT IN (SELECT conversation_id FROM sources) "
        "AND conversation_id NOT IN (SELECT conversation_id FROM memories)"
    )


def _delete_unsaid_forms(store: Store, cues: list[str]) -> None:
    """Surface forms of surviving cues that only forgotten memories said ("networking" for the cue "network"):
    a form stays when the text of a memory still holding its cue has all of its words."""
    if not cues:
        return
    wanted = "(SELECT unnest(?::VARCHAR[]))"
    forms = store.con.execute(f"SELECT form, cue FROM cue_forms WHERE cue IN {wanted} AND form <> cue", [cues])
    candidates = forms.fetchall()
    if not candidates:
        return
    said: dict[str, list[set[str]]] = {}
    holders = store.con.execute(
        "SELECT mc.cue, any_value(m.restatement) || ' ' || coalesce(string_agg(s.text, ' '), '') "
        "FROM memory_cues mc JOIN memories m USING (memory_id) LEFT JOIN provenance p USING (memory_id) "
        f"LEFT JOIN sources s USING (source_id) WHERE mc.cue IN {wanted} GROUP BY mc.cue, mc.memory_id",
        [cues],
    )
    for cue, text in holders.fetchall():
        said.setdefault(cue, []).append(set(content_tokens(text)))
    unsaid = [(form, cue) for form, cue in candidates if not any(set(form.split()) <= t for t in said.get(cue, []))]
    if unsaid:
        pairs = [f"{form}\x1f{cue}" for form, cue in unsaid]
        store.con.execute("DELETE FROM cue_forms WHERE form || '\x1f' || cue IN (SELECT unnest(?::VARCHAR[]))", [pairs])


def _orphaned_sources(store: Store, selection: MemoryFilter, memory_ids: list[int]) -> list[int]:
    """Source turns of the forgotten memories (and, for a conversation/session/date selection, every turn in it)
    that no surviving memory still cites."""
    candidates = f"SELECT source_id FROM provenance WHERE memory_id IN {IDS}"
    params: list = [memory_ids]
    direct, direct_params = _source_condition(selection)
    if direct:
        candidates += f" UNION SELECT source_id FROM sources WHERE {direct}"
        params += direct_params
    rows = store.con.execute(
        f"SELECT source_id FROM ({candidates}) WHERE source_id NOT IN "
        f"(SELECT source_id FROM provenance WHERE memory_id NOT IN {IDS}) ORDER BY source_id",
        [*params, memory_ids],
    ).fetchall()
    return [r[0] for r in rows]


def _source_condition(selection: MemoryFilter) -> tuple[str, list]:
    """The selection applied to the sources table, when it can be (not for ids or persons): sources carry the same
    conversation, session and date columns the memories' filter uses."""
    if selection.ids or selection.person or selection.empty:
        return "", []
    return selection.where()


def _count(store: Store, table: str, condition: str, ids: list[int]) -> int:
    """Rows of `table` tied to these memory ids."""
    if not ids:
        return 0
    row = store.con.execute(f"SELECT count(*) FROM {table} WHERE {condition}", [ids] * condition.count("?"))
    return int(row.fetchone()[0])  # type: ignore[index]  # count(*) always gives a row
