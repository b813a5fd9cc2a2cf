"""The dataflow graph of a legalized kernel and a low-pressure schedule of it.

Nodes are the kernel's bundles (``PtoOp`` instances, by position); an edge ``a -> b``
means ``b`` reads a tile ``a`` produces, or ``b`` must follow ``a`` in global memory
(a store and any other access of the same tensor keep their order). The schedule is a
list schedule: among the ready bundles it takes the one that lowers the live tile bytes
most (results minus sources it is the last reader of), ties broken by program order.
Priorities change only when a value's last reader becomes known, so a lazy heap keeps the
whole schedule at O((V + E) log V).
"""

from __future__ import annotations

import heapq
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from functools import cache
from typing import TYPE_CHECKING

from xdsl.ir import SSAValue

from ptoc.backend.isa import Executor
from ptoc.backend.isa import row as optable_row
from ptoc.dialects.compound_ops.view import SCRATCH_NAME
from ptoc.dialects.dtypes import is_pred
from ptoc.dialects.pto import AddrOp, IndexAddrOp, PtoOp
from ptoc.dialects.pto_types import PtoTileType

if TYPE_CHECKING:
    import networkx as nx


class DepGraph:
    """The dependence graph of ``n`` bundles (nodes ``0 .. n-1``): successors and
    predecessors in edge insertion order, each edge once (the orders a
    ``networkx.DiGraph`` gives). Every edge ends at the newest node (:meth:`add_node`
    takes its predecessors at once), so plain lists need no duplicate checks; a networkx
    graph was slow to walk once per bundle and took more memory than the IR."""

    __slots__ = ("pred", "succ")

    def __init__(self) -> None:
        self.succ: list[list[int]] = []
        self.pred: list[tuple[int, ...]] = []

    def add_node(self, preds: dict[int, None]) -> int:
        """Add the next node with edges from ``preds`` (in order); returns its index."""
        i = len(self.succ)
        for a in preds:
            self.succ[a].append(i)
        self.succ.append([])
        self.pred.append(tuple(preds))
        return i

    @property
    def nodes(self) -> range:
        return range(len(self.succ))

    @property
    def edges(self) -> list[tuple[int, int]]:
        """Every edge, by source node, then in insertion order."""
        return [(a, b) for a, out in enumerate(self.succ) for b in out]

    def successors(self, i: int) -> Iterator[int]:
        return iter(self.succ[i])

    def predecessors(self, i: int) -> Iterator[int]:
        return iter(self.pred[i])

    def to_networkx(self) -> nx.DiGraph:
        """The same graph as a ``networkx.DiGraph`` (for drawing and graph algorithms)."""
        import networkx as nx

        g = nx.DiGraph()
        g.add_nodes_from(self.nodes)
        g.add_edges_from(self.edges)
        return g


@dataclass
class Dataflow:
    """The graph plus per-bundle facts the scheduler and allocator share."""

    ops: list[PtoOp]
    graph: DepGraph
    #: tile values each bundle reads (in binding order, repeats kept: its op's own
    #: operand slice, which the op keeps until the emitter has read it)
    reads: list[Sequence[SSAValue]]
    #: each bundle's results (its op's own tuple: later passes need not visit the op)
    results: list[Sequence[SSAValue]]
    #: bundle index producing each tile value, by the value's ``id`` (the IR keeps the
    #: values alive; an SSAValue hashes through a Python method)
    producer: dict[int, int]
    #: the GM tensor each bundle addresses (:func:`tensor_key`; None: none)
    tensors: list[SSAValue | None]
    #: the live bytes each bundle's results add -- their bytes, with predicates weighing
    #: :data:`PRED_PENALTY` more (they cannot be copied -- TMOV is numeric only -- so they
    #: are produced late); None for a bundle producing CUBE tiles
    grows: list[int | None]
    #: the most bytes per PE one bundle's distinct sources and results take together
    most: int
    #: the bytes per PE of every tile value read or produced, by ``id``
    nbytes: dict[int, int]


def _access(op: PtoOp) -> Executor | None:
    """LOAD or STORE for the bundles that address a GM tensor, else None."""
    return _access_of(op.MNEMONIC)


@cache
def _access_of(mnemonic: str) -> Executor | None:
    kind = optable_row(mnemonic).executor
    return kind if kind in (Executor.LOAD, Executor.STORE) else None


def tensor_key(op: PtoOp) -> SSAValue | None:
    """The tensor a TLOAD/TSTORE addresses (through its ``pto.addr`` operand)."""
    if _access(op) is None or not op.scalars:
        return None
    addr = op.scalars[0].owner
    if type(addr) is AddrOp:  # (the common case) its one operand, without the accessor
        return addr._operands[0]
    if isinstance(addr, IndexAddrOp):  # a window a run-time index moves: its tensor
        addr = addr.base.owner
    tensor = getattr(addr, "tensor", None)
    return tensor if isinstance(tensor, SSAValue) else None


def build_dataflow(ops: Sequence[PtoOp]) -> Dataflow:
    """Dataflow and memory-order edges of the bundles in program order."""
    g = DepGraph()
    producer: dict[int, int] = {}
    reads: list[Sequence[SSAValue]] = []
    results: list[Sequence[SSAValue]] = []
    last_store: dict[SSAValue, int] = {}
    loads_since: dict[SSAValue, list[int]] = {}
    last_cube: int | None = None
    tensors: list[SSAValue | None] = []
    grows: list[int | None] = []
    most = 0
    # every tile value's bytes per PE, by id (the values are the IR's, alive): each
    # result's when it is produced, a value from outside these bundles' when it is read
    nbytes: dict[int, int] = {}
    # :func:`_kind` of each result type, by id (the values keep their types alive)
    kinds: dict[int, int] = {}
    for i, op in enumerate(ops):
        preds: dict[int, None] = {}  # the edges into bundle i, in order, each once
        srcs = op.srcs
        reads.append(srcs)
        for v in srcs:
            p = producer.get(id(v))
            if p is not None:  # else defined outside these bundles (before a loop)
                preds[p] = None
        need = 0
        for v in _distinct(srcs):  # each source once
            n = nbytes.get(id(v))
            if n is None:
                n = nbytes[id(v)] = _bytes(v)
            need += n
        made = 0
        kind = _PLAIN
        made_values = op.results
        results.append(made_values)
        for r in made_values:
            rt = r.type
            assert type(rt) is PtoTileType  # (no class derives from it; isinstance is slow)
            producer[id(r)] = i
            nbytes[id(r)] = n = rt.nbytes
            made += n
            c = kinds.get(id(rt))
            if c is None:
                c = kinds[id(rt)] = _kind(rt)
            kind = max(kind, c)
        most = max(most, need + made)
        grow = None if kind == _CUBE else made + PRED_PENALTY if kind == _PRED else made
        grows.append(grow)
        if grow is None:  # a CUBE producer
            # CUBE tiles can be neither copied nor spilled: produce them in program order
            # (legalize emits each chunk's loads right before the bundle reading them), so
            # no CUBE load runs ahead of the operands its reader waits for
            if last_cube is not None:
                preds[last_cube] = None
            last_cube = i
        access = _access_of(op.MNEMONIC)
        t = None if access is None else tensor_key(op)
        tensors.append(t)
        if t is not None:
            if t in last_store:
                preds[last_store[t]] = None
            if access is Executor.STORE:
                for j in loads_since.pop(t, []):
                    preds[j] = None
                last_store[t] = i
            else:
                loads_since.setdefault(t, []).append(i)
        g.add_node(preds)
    return Dataflow(list(ops), g, reads, results, producer, tensors, grows, most, nbytes)


#: :func:`_kind` of a result type: a plain tile, a predicate, a CUBE tile (a bundle's
#: results take the largest: one CUBE tile makes it a CUBE producer)
_PLAIN, _PRED, _CUBE = 0, 1, 2


def _kind(t: PtoTileType) -> int:
    if t.cube is not None:
        return _CUBE
    return _PRED if is_pred(t.dtype) else _PLAIN


def live_ops(
    df: Dataflow,
    roots: frozenset[SSAValue] = frozenset(),
    loaded_after: Callable[[SSAValue], bool] | None = None,
) -> list[bool]:
    """Bundles whose results (transitively) reach an output; the rest is dead code.

    The roots are the bundles without destinations (the stores to the kernel's tensors,
    and any bundle whose effect is outside the tile queues), and those producing one of
    ``roots`` (values read outside the bundles given: in a loop body or after a loop).
    Liveness follows dataflow, not the memory-order edges (a load that merely precedes a
    store is not needed by it), except through the GM scratch area of the compound
    lowerings: a live load of the scratch tensor needs every earlier store to it. So an
    op is live exactly when the ``tile`` op it comes from is
    (``ptoc.dialects.reference.live_set``): the compiler drops the ops the reference does
    not evaluate. ``loaded_after(tensor)`` says whether a bundle outside these ones that
    runs later (after a loop, or in the next iteration of the loop around them) loads
    the scratch tensor: its stores are then live as well.
    """
    keep = [False] * len(df.ops)
    read_later: set[SSAValue] = set()  # scratch tensors with a live load further on
    # (from the graph's lists: the ops themselves are not visited again)
    results, tensors, reads, producer = df.results, df.tensors, df.reads, df.producer
    for i in range(len(results) - 1, -1, -1):
        tensor = tensors[i]
        scratch = _is_scratch(tensor)
        dsts = results[i]
        if not dsts:
            keep[i] = keep[i] or not scratch or tensor in read_later
            if not keep[i] and loaded_after is not None and tensor is not None:
                keep[i] = loaded_after(tensor)
        elif roots and any(d in roots for d in dsts):
            keep[i] = True  # read outside this run of bundles (a loop, or after one)
        if not keep[i]:
            continue  # every reader of this bundle's results comes later: already decided
        for v in reads[i]:
            p = producer.get(id(v))
            if p is not None:
                keep[p] = True
        if scratch and _access(df.ops[i]) is Executor.LOAD:
            assert tensor is not None
            read_later.add(tensor)
    return keep


def _is_scratch(tensor: SSAValue | None) -> bool:
    """The GM scratch tensor that ``lower-compound`` appends (its views go through it)."""
    return tensor is not None and tensor.name_hint == SCRATCH_NAME


#: scheduling penalty that sinks predicate producers toward their readers
PRED_PENALTY = 1 << 40
#: base priority of the bundles producing CUBE tiles, which then run in program order
#: (the order legalize emits: each chunk's loads right before the bundle that reads them)
CUBE_BASE = 1 << 41


def _distinct(srcs: Sequence[SSAValue]) -> tuple[SSAValue, ...]:
    """``srcs`` without repeats, in order (by id: a value hashes through a Python
    method; most bundles read one value, or two different ones)."""
    if len(srcs) < 2 or (len(srcs) == 2 and srcs[0] is not srcs[1]):
        return tuple(srcs)
    return tuple({id(v): v for v in srcs}.values())


def _bytes(v: SSAValue) -> int:
    t = v.type
    assert type(t) is PtoTileType  # (no class derives from it; isinstance is slow)
    return t.nbytes


def schedule(df: Dataflow, keep: Sequence[bool]) -> list[int]:
    """A topological order of the kept bundles that keeps live tile bytes low."""
    g = df.graph
    n = len(df.reads)
    # by value id (the values are the graph's, alive; an SSAValue hashes through a
    # Python method): the readers still to run, and the bytes
    remaining_readers: dict[int, int] = {}
    # each kept bundle's distinct reads (a list by index: a dict per bundle took as much
    # memory as the graph); the part of its priority that never changes is its growth
    # (None: a CUBE producer, whose priority is fixed)
    distinct: list[tuple[SSAValue, ...]] = [()] * n
    grows = df.grows
    nbytes = df.nbytes
    for i, srcs in enumerate(df.reads):
        if keep[i]:
            distinct[i] = reads = _distinct(srcs)
            for v in reads:
                k = id(v)
                remaining_readers[k] = remaining_readers.get(k, 0) + 1
    # the kept predecessors still to run (-1: a bundle not kept)
    if all(keep):  # (the common case: no dead code)
        indeg = [len(p) for p in g.pred]
    else:
        indeg = [
            sum(1 for p in g.predecessors(i) if keep[p]) if keep[i] else -1 for i in g.nodes
        ]
    kept = sum(1 for d in indeg if d >= 0)

    def priority(i: int) -> int:
        grow = grows[i]
        if grow is None:
            # CUBE tiles cannot be copied or spilled either: produce each when the bundles
            # before it in program order (its chunk's readers among them) have run
            return CUBE_BASE + i
        free = 0
        for v in distinct[i]:  # (a loop: a bundle reads a value or two)
            k = id(v)
            if remaining_readers[k] == 1:
                free += nbytes[k]
        return grow - free

    heap = [(priority(i), i) for i, d in enumerate(indeg) if d == 0]
    heapq.heapify(heap)
    # each ready bundle's newest priority (None: not pushed yet); a heap entry with an
    # older one is stale
    current: list[int | None] = [None] * n
    for p, i in heap:
        current[i] = p
    order: list[int] = []
    done = bytearray(n)
    while heap:
        p, i = heapq.heappop(heap)
        if done[i] or current[i] != p:
            continue
        done[i] = 1
        order.append(i)
        for v in distinct[i]:
            k = id(v)
            remaining_readers[k] -= 1
            if remaining_readers[k] == 1 and k in df.producer:
                # the last reader now frees v: raise its priority if it is ready
                last = next(
                    j
                    for j in g.successors(df.producer[k])
                    if keep[j] and not done[j] and v in df.reads[j]
                )
                if indeg[last] == 0:
                    current[last] = q = priority(last)
                    heapq.heappush(heap, (q, last))
        for s in g.successors(i):
            if not keep[s]:
                continue
            indeg[s] -= 1
            if indeg[s] == 0:
                current[s] = q = priority(s)
                heapq.heappush(heap, (q, s))
    assert len(order) == kept, "dataflow graph has a cycle"
    return order


def value_graph(df: Dataflow) -> nx.DiGraph:
    """The dataflow graph with its tiles as nodes: op node ``("op", i)`` for bundle ``i``
    (``kind="op"``, ``mnemonic``), tile node ``("tile", j)`` for the ``j``-th result
    produced (``kind="tile"``, ``bytes`` per PE, ``label``: its type); edges op -> tile
    (produces), tile -> op (reads), and op -> op (``memory=True``) for the memory-order
    edges of ``df.graph`` that no tile already implies. For drawing and liveness."""
    import networkx as nx

    g = nx.DiGraph()
    tiles: dict[SSAValue, tuple[str, int]] = {}
    for i, op in enumerate(df.ops):
        node = ("op", i)
        g.add_node(node, kind="op", mnemonic=op.MNEMONIC)
        for v in df.reads[i]:
            if v in tiles:  # else a loop-carried argument (no bundle produces it)
                g.add_edge(tiles[v], node)
        for v in op.dsts:
            t = ("tile", len(tiles))
            tiles[v] = t
            g.add_node(t, kind="tile", bytes=_bytes(v), label=str(v.type))
            g.add_edge(node, t)
    for a, b in df.graph.edges:
        na, nb = ("op", a), ("op", b)
        if not any(g.has_edge(t, nb) for t in g.successors(na)):
            g.add_edge(na, nb, memory=True)
    return g
