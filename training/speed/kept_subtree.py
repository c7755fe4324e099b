"""How good a search is that goes on in the subtree kept from the last move (``selfplay.reuse``).

    python -m training.speed.kept_subtree [--players 2] [--modules ...] [--games 60] [--sims 100]
        [--judge-sims 800]

Why: with ``selfplay.reuse`` a self-play search starts from the subtree the moves since the game's
last search lead to, and its visits count in the budget (:meth:`agents.players.az.AZAgent.root_visits`'s
``after``), so it runs fewer new simulations; this says whether its targets and moves are as good
as those of a search from an empty tree with the same budget. Games are played as self-play plays
them (one agent in every seat, its visit counts sampled for the first ``--sample-moves`` decisions,
then the most visited move; each decision on a determinised state). At every decision where a
subtree may be kept (:func:`agents.search.subtree.same_information`) the same position is also searched
from an empty tree by two agents with other seeds (``fresh``, ``fresh, other seed``: how far two
equal searches differ) and by a ``--judge-sims`` search (the judge). For each search the command
prints how often its move is the judge's, the judge's value of its move, and the total variation
distance from its visit distribution (the policy target) to the judge's.

Not a speed figure: it measures the quality of the searches whose speed
``python -m training.speed.batched_selfplay --reuse`` measures, and lives beside it.
"""

from __future__ import annotations

import argparse
import sys
import time

import numpy as np

from training.common.cli import CliError, run_cli

LABELS = ("kept", "fresh", "fresh, other seed")


def _distribution(counts: np.ndarray) -> np.ndarray:
    visits = np.floor(counts)  # AZAgent.root_visits adds a tie-break below 1
    return visits / max(visits.sum(), 1.0)


def main(argv: list[str] | None = None) -> dict[str, dict[str, float]]:
    from agents import build
    from agents.nets.shipped import default_model
    from agents.search.subtree import same_information
    from splendor_env import rules
    from splendor_env.actions import num_actions
    from splendor_env.deal import setup
    from splendor_env.determinize import determinize
    from splendor_env.state import CURRENT, parse_modules, state_size

    ap = argparse.ArgumentParser(prog="python -m training.speed.kept_subtree", description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)  # fmt: skip
    ap.add_argument("--players", type=int, default=2, choices=[2, 3, 4])
    ap.add_argument("--modules", nargs="*", default=[], help="module names (default: the base game)")
    ap.add_argument("--games", type=int, default=60)
    ap.add_argument("--sims", type=int, default=100, help="the budget of the kept and fresh searches")
    ap.add_argument("--judge-sims", type=int, default=800, help="the judge's budget")
    ap.add_argument("--sample-moves", type=int, default=10, help="decisions sampled from the visit counts")
    ap.add_argument("--init", default=None, help="network (default: az's for the game)")
    ap.add_argument("--seed", type=int, default=0, help="deals from 7000 + game, sampling from this seed")
    args = ap.parse_args(argv)
    if min(args.games, args.sims, args.judge_sims) < 1:
        raise CliError("--games, --sims and --judge-sims must be >= 1")
    try:
        bits = parse_modules(args.modules)
    except (TypeError, ValueError) as e:
        raise CliError(f"--modules: {e}") from None
    net = args.init or default_model(args.players, args.modules)
    if net is None:
        raise CliError(
            f"no shipped network for {args.players} players with modules {args.modules}: pass --init"
        )
    kept = build(f"az:{net},sims={args.sims}", seed=args.seed + 1)
    others = [build(f"az:{net},sims={args.sims}", seed=args.seed + k) for k in (2, 3)]
    judge = build(f"az:{net},sims={args.judge_sims}", seed=args.seed + 4)
    rng = np.random.default_rng(args.seed)
    na = num_actions(bits)
    picks, values, distances = [], [], []
    decisions = 0
    start = time.perf_counter()
    for g in range(args.games):
        s = np.zeros(state_size(bits), np.int32)
        setup(s, args.players, 7000 + g, 100, bits)
        mask = np.zeros(na, np.int8)
        since: list[int] | None = None
        last: np.ndarray | None = None  # the state of the game's last search
        searched = 0
        while not rules.is_over(s):
            if rules.legal_mask(s, mask) == 1:
                a = int(np.flatnonzero(mask)[0])
                if since is not None:
                    since.append(a)
                rules.apply_action(s, a)
                continue
            d = determinize(s, int(s[CURRENT]), rng)
            may_keep = since is not None and last is not None and same_information(last, d)
            counts = kept.root_visits(d, after=since)
            last = d
            decisions += 1
            if may_keep:
                judged = judge.root_visits(d)
                actions, visits, wsum = judge.last_tree.root_stats(int(d[CURRENT]))
                q = np.zeros(na)
                q[actions] = wsum / np.maximum(visits, 1.0)
                legal = mask != 0
                best = int(np.argmax(np.where(legal, judged, -1.0)))
                row = [counts] + [agent.root_visits(d) for agent in others]
                moves = [int(np.argmax(np.where(legal, c, -1.0))) for c in row]
                picks.append([m == best for m in moves])
                values.append([q[m] for m in moves])
                target = _distribution(judged)
                distances.append([0.5 * np.abs(_distribution(c) - target).sum() for c in row])
            if searched < args.sample_moves:
                p = _distribution(np.where(mask != 0, counts, 0.0))
                a = int(rng.choice(na, p=p))
            else:
                a = int(np.argmax(np.where(mask != 0, counts, -1.0)))
            since = [a]
            searched += 1
            rules.apply_action(s, a)
    n = len(picks)
    print(
        f"{args.players} players, modules {args.modules or 'none'}, network {net}, {args.games} games, {decisions} searched decisions, "
        f"{n} ({n / max(decisions, 1):.0%}) where a subtree may be kept; {args.sims} simulations a search, "
        f"judge {args.judge_sims}; {time.perf_counter() - start:.0f} s"
    )
    out: dict[str, dict[str, float]] = {}
    if n == 0:
        return out
    p, v, dist = np.array(picks, float), np.array(values), np.array(distances)
    for k, label in enumerate(LABELS):
        out[label] = {
            "judge's move": p[:, k].mean(),
            "judge's value": v[:, k].mean(),
            "distance": dist[:, k].mean(),
        }
        print(
            f"  {label:<18} the judge's move {p[:, k].mean():6.1%}, the judge's value of its move "
            f"{v[:, k].mean():+.4f}, distance to the judge's visits {dist[:, k].mean():.3f}"
        )
    diff = v[:, 0] - v[:, 1]
    half = 1.96 * diff.std() / np.sqrt(n)
    print(
        f"  judge's value, kept minus fresh: {diff.mean():+.4f} [{diff.mean() - half:+.4f}, {diff.mean() + half:+.4f}]"
    )
    out["share kept"] = {"decisions": n / max(decisions, 1)}
    return out


if __name__ == "__main__":
    sys.exit(run_cli(main, prog="python -m training.speed.kept_subtree"))
