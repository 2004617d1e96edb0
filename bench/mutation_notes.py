"""Which surviving mutants of `bench/mutation.py` cannot change behaviour (`EQUIVALENT`), and why
the behaviour-changing survivors left are not pinned (`NOTES`): keyed by module and
`bench.mutants.key` (line and column, so an edit that moves a module's lines must move its keys)."""

from __future__ import annotations

_VERDICT, _ENDPOINT = "solver/certify/verdict.py", "evt/endpoint.py"
_TOLERANCE = (
    "brentq's tolerance on log r, 1e-12 -> 1.01e-12: a limit can move only within that tolerance (1e-12 + "
    "1e-12 |log r|, at most a few 1e-11 of theta), when the search stops one step sooner; the tests pin the "
    "limits on the Wilks cut to 1e-6, and pinning the last bits would pin brentq's iterates, not the interval"
)
#: (module, `bench.mutants.key`) -> why no input can tell the mutant from the module
EQUIVALENT: dict[tuple[str, str], str] = {
    (_VERDICT, "L196:52 compare: `gap < 0` -> `gap <= 0`"): (
        "`in_words` returns 'the plan equals ...' for gap == 0 (and -0.0) on the line before, so no gap that "
        "reaches the comparison tells `<=` from `<`"
    ),
    (_VERDICT, "L339:19 return: `[]` -> `None`"): (
        "`refuters()` is read only by `gather`'s `if refuters:`, where None and [] are both false"
    ),
    (_VERDICT, "L430:58 constant: `2` -> `3`"): (
        "no_bound would tie with not_distinguishable (3); the sort is stable and no_bound is always said "
        "before it (`gather` says it first; nothing inserts a reason ahead before rule 9), so the order stays"
    ),
    (_VERDICT, "L430:99 constant: `3` -> `4`"): "not_distinguishable keeps the largest key, so the order stays",
    (
        _ENDPOINT,
        "L85:8 delete: `if theta_inf: return EndpointInterval(math.inf, math.inf, math.inf,...` -> (deleted)",
    ): (
        "theta_inf means theta_hat = inf and no boundary fit, so the degenerate return that follows gives "
        "(theta_hat, theta_hat, theta_hat, fit.boundary) = (inf, inf, inf, False): the same interval"
    ),
    (_ENDPOINT, "L109:66 constant: `1` -> `2`"): (
        "`else -2` for `else -1`: j is read only through `j < 0` (upper = the largest excess) when no grid "
        "point is inside, and -2 < 0 as -1 is"
    ),
}
_FLUID = "solver/certify/fluid_lp.py"
_UNUSED_COLUMN = "an extra column with no cost and no row: the optimum and the rates read (`x[:n_instances]`) stay"
_SAME_LP = "another round re-solves the same LP (no cut was added), which HiGHS answers the same way"
EQUIVALENT.update(
    {
        (_FLUID, "L29:13 constant: `0` -> `1`"): "a default `build` always overrides (its one constructor)",
        (_FLUID, "L30:13 constant: `0` -> `1`"): "a default `build` always overrides (its one constructor)",
        (
            _FLUID,
            "L59:8 delete: `if not self.rows: return (np.zeros((0, self.n)), np.zeros(0))` -> (deleted)",
        ): (
            "without rows `np.array([])` has shape (0,): `_solve` passes no such block (`len(b) == 0`) and "
            "`A.T @ zeros(0)` is 0 in `certified_max`, as with the (0, n) block"
        ),
        (_FLUID, "L74:17 constant: `3` -> `4`"): _UNUSED_COLUMN,
        (_FLUID, "L76:26 constant: `1` -> `2`"): _UNUSED_COLUMN,
        (_FLUID, "L76:44 constant: `0` -> `1`"): _UNUSED_COLUMN,
        (_FLUID, "L114:41 arith: `y + t` -> `y - t`"): (
            "each thread is a member of a slot once, so `coefs` holds no entry for it yet: both `get`s return 0 "
            "(`y - t` indexes the x block, never a key of a slot row)"
        ),
        (_FLUID, "L115:15 boolop: `i and sl.k` -> `i or sl.k`"): (
            "the term added is `sl.k * i`, zero whenever either is zero: an explicit 0 in the row changes nothing"
        ),
        (_FLUID, "L156:56 constant: `0` -> `1`"): (
            "the one caller with cuts (`fluid_bound.solve_problem`) passes `rounds`; without neighbourhoods a "
            "round adds no cut and stops"
        ),
        (_FLUID, "L156:75 sign: `-np.inf` -> `np.inf`"): (
            "the one caller with cuts passes `enough`; without cuts (rounds 0) `enough` is never read"
        ),
        (_FLUID, "L169:16 constant: `0` -> `1`"): _SAME_LP,
        (_FLUID, "L176:16 arith: `added += 1` -> `added -= 1`"): "`added` is read only as `not added`: -k is true as k",
        (_FLUID, "L176:25 constant: `1` -> `2`"): "`added` is read only as `not added`: 2k is true as k",
        (_FLUID, "L177:8 delete: `if not added: break` -> (deleted)"): _SAME_LP,
        (_FLUID, "L178:12 delete: `break` -> (deleted)"): _SAME_LP,
        (_FLUID, "L180:81 constant: `0` -> `1`"): (
            "the LP always has inequality rows (four per thread), so the `else` is never taken"
        ),
        (_FLUID, "L183:18 arith: `p_ub @ lp.b_ub + q_eq @ lp.b_eq` -> `p_ub @ lp.b_ub - q_eq @ lp.b_eq`"): (
            "every equality row's right-hand side is 0 (the group rows), so `q_eq @ b_eq` is 0"
        ),
    }
)
_ENOUGH = (
    "once the LP is at most `enough` the cuts stop: more cuts would only lower a value that its callers "
    "(`fluid_max`, `measured_bound`) compare with `enough`, so no maximum they compute changes; only time does"
)
_TINY_RANGE = (
    "a chord is skipped when the slot's load range is below 1e-12 of its top (a numerical guard: the chord "
    "there is the flat line the slot row already states)"
)
#: (module, `bench.mutants.key`) -> why a behaviour-changing survivor is not pinned
NOTES: dict[tuple[str, str], str] = {
    (_ENDPOINT, f"L{line}:{col} constant: `1e-12` -> `1.01e-12`"): _TOLERANCE for line in (102, 115) for col in (67, 79)
}
NOTES.update(
    {
        (_FLUID, "L167:8 delete: `if -res.fun <= enough: break` -> (deleted)"): _ENOUGH,
        (_FLUID, "L168:12 delete: `break` -> (deleted)"): _ENOUGH,
        (_FLUID, "L167:11 compare: `-res.fun <= enough` -> `-res.fun < enough`"): _ENOUGH,
        (_FLUID, "L146:32 compare: `hi - lo <= 1e-12 * hi` -> `hi - lo < 1e-12 * hi`"): _TINY_RANGE,
        (_FLUID, "L146:32 arith: `hi - lo` -> `hi + lo`"): _TINY_RANGE,
        (_FLUID, "L146:43 arith: `1e-12 * hi` -> `1e-12 / hi`"): _TINY_RANGE,
        (_FLUID, "L146:43 constant: `1e-12` -> `1.01e-12`"): _TINY_RANGE,
        (_FLUID, "L79:37 constant: `1e-12` -> `1.01e-12`"): (
            "the box on x binds only for a thread of less than 1e-12 cycles per packet (cycles > 0 is all the "
            "spec asks); below that the box, not the rows, caps the rate -- left alone"
        ),
        (
            _FLUID,
            "L73:4 delete: `pairs = sorted(pairs | {tuple(sorted((nb.u, v))) for nb in neighbou...` -> (deleted)",
        ): (
            "a neighbourhood's pairs are those of its chords on every spec the tests build; a pair only a "
            "neighbourhood names would make `add_cut` fail (KeyError), not give a wrong bound"
        ),
        (_FLUID, "L171:18 arith: `1.0 - res.x[lp.s + nb.u]` -> `1.0 + res.x[lp.s + nb.u]`"): (
            "the point a cut is separated at: any cut `separate` returns is valid, so a wrong point finds other "
            "(valid) cuts or none; the exact-cut test reaches the same value either way"
        ),
        (_FLUID, "L171:18 constant: `1.0` -> `1.01`"): "as the line above: the separation point, not the cut",
    }
)

_LEVEL = "solver/binding/level_lp.py"
_EMPTY_ROWS = (
    "the rows skipped are empty (0 = 0, 0 <= 0) and every row read is indexed through `_Rows`: the LP, the "
    "duals of the rows read and the value are the same"
)
_LIMIT = (
    "a limit's value (modes, columns, MIP columns): what happens at the limit is pinned with the limit "
    "monkeypatched (`test_the_column_limits_are_checked_at_their_boundaries`, "
    "`test_integer_modes_refuses_more_columns_than_its_limit`); the number itself is a resource choice"
)
_ENTRY = (
    "the reduced-cost entry tolerance: a column priced within 1e-9 of 0 may enter or not; the LP value is the "
    "same, and only a degenerate LP (a column outside the master at reduced cost 0) changes the counts"
)
_ARTIFICIAL = (
    "the convergence test on the artificials: HiGHS reads values as small as 1e-9 as 0 (as the configuration LP's)"
)
EQUIVALENT.update(
    {
        (_LEVEL, "L102:11 compare: `top > cap` -> `top >= cap`"): (
            "at top == cap the grid branch has no step (log 1 = 0): points [0, cap], the else branch's one mode "
            "[0, max(cap, top)]"
        ),
        (_LEVEL, "L128:11 compare: `level < 0` -> `level <= 0`"): (
            "the L level is the outermost level a thread loads: a level-0 resource with users is the L level "
            "(skipped the line before) or none reaches here"
        ),
        (_LEVEL, "L128:19 constant: `0` -> `1`"): "as `level <= 0` on the same line: level 0 never reaches it",
        (_LEVEL, "L139:53 constant: `0` -> `1`"): (
            "`initial` counts only for a type no configuration holds: the extra i = 0 finds `has` all False"
        ),
        (_LEVEL, "L179:113 constant: `0` -> `1`"): (
            "without L-level resources R = 0: no row reads a load column, so an extra zero column is never read"
        ),
        (_LEVEL, "L191:56 constant: `0` -> `1`"): (
            "`lp.modes` is never empty (the product of no grids is one empty mode): the else is never taken"
        ),
        (_LEVEL, "L198:26 constant: `1` -> `2`"): _EMPTY_ROWS,
        (_LEVEL, "L210:26 constant: `1` -> `2`"): _EMPTY_ROWS,
        (_LEVEL, "L302:4 delete: `chosen: list[tuple[int, int, int, np.ndarray]] = []` -> (deleted)"): (
            "both branches that follow assign `chosen`: the annotated empty list is never read"
        ),
        (_LEVEL, "L328:4 delete: `eq0, ub0 = (csc_matrix(eq0), csc_matrix(ub0))` -> (deleted)"): (
            "`hstack` of the dense fixed block with the sparse ones builds the same matrix"
        ),
        (_LEVEL, "L340:27 arith: `b_eq @ pi_eq + b_ub @ pi_ub` -> `b_eq @ pi_eq - b_ub @ pi_ub`"): (
            "every inequality row's right-hand side is 0 (`_rhs`), so `b_ub @ pi_ub` is 0"
        ),
    }
)
NOTES.update(
    {
        (_LEVEL, "L63:12 constant: `400` -> `401`"): _LIMIT,
        (_LEVEL, "L65:14 constant: `2000000` -> `2000001`"): _LIMIT,
        (_LEVEL, "L66:18 constant: `60000` -> `60001`"): _LIMIT,
        (_LEVEL, "L291:91 constant: `400` -> `401`"): (
            "`max_iterations` 400 -> 401: a test needs 400 master solves, too slow for a per-mutant run (as the "
            "configuration LP's 500)"
        ),
        (_LEVEL, "L100:61 constant: `1e-09` -> `1.01e-09`"): (
            "the top's widening moves by 1e-11 of the load: the grid changes only for a load within 1e-11 of a grid "
            "point; the capacity itself is pinned (`test_a_load_at_the_capacity_gets_a_mode_above_it...`)"
        ),
        (_LEVEL, "L100:69 constant: `1e-09` -> `1.01e-09`"): "as the relative widening on the same line",
        (
            _LEVEL,
            "L103:18 compare: `math.log(top / cap) / math.log1p(ratio) + 2 > max_modes ** (1 / len...` -> "
            "`math.log(top / cap) / math.log1p(ratio) + 2 >= max_modes ** (1 / le...`",
        ): "differs only where two floating-point logarithms meet exactly",
        (_LEVEL, "L345:32 compare: `r < -1e-09` -> `r <= -1e-09`"): _ENTRY,
        (_LEVEL, "L345:36 sign: `-1e-09` -> `1e-09`"): _ENTRY,
        (_LEVEL, "L345:37 constant: `1e-09` -> `1.01e-09`"): _ENTRY,
        (_LEVEL, "L350:24 compare: `artificial <= 1e-09` -> `artificial < 1e-09`"): _ARTIFICIAL,
        (_LEVEL, "L350:38 constant: `1e-09` -> `1.01e-09`"): _ARTIFICIAL,
        (_LEVEL, "L357:12 delete: `taken[key].add(i)` -> (deleted)"): (
            "a column already in the master would be priced in again, which never happens while HiGHS's duals on "
            "these LPs are exact (as the configuration LP's `chosen.add`)"
        ),
        (_LEVEL, "L414:25 arith: `n_apps + n_z` -> `n_apps - n_z`"): (
            "the slice then makes the z and most y columns integer: a plan's y are integers too, so the bound stays "
            "sound, and the tests' MIP optimum has integral y: the same value"
        ),
        (_LEVEL, "L416:50 constant: `0.0` -> `0.01`"): (
            "artificials up to 0.01 at a cost of 10 per unit: placing 0.01 of a thread is worth at most 0.01 (rates "
            "are scaled to at most 1), so the MIP never uses them on a spec whose threads all fit"
        ),
    }
)
