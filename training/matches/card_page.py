"""A benchmark card as a page and a figure: what ``card.md`` and ``card.png`` show of a card's dict.

Why apart from the playing (:mod:`training.matches.card`): a page is read long after its games, and
older cards (protocol 1, made before provenance was recorded) must still render; this module only
reads a card's dict, so it never plays a game.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from training.common.progress import save_text
from training.matches.report import save_figure, win_rate_panel


def elo_text(entry: dict[str, Any]) -> str:
    """``Elo 1698 [1669, 1726]``, or why there is none (protocol 2 before its anchors of that game)."""
    if entry["elo"] is None:
        return "not rated (the protocol's anchors for this game are not measured yet)"
    lo, hi = entry["elo_ci95"]
    return f"Elo {entry['elo']:.0f} [{lo:.0f}, {hi:.0f}]"


def _pct(x: float) -> str:
    return f"{100 * x:.1f}"


def _anchor(value: float | None) -> str:
    return "not measured" if value is None else f"{value:.0f}"


NOT_RECORDED = "not recorded"  # what a card made before a field was recorded shows for it


def _dirty(made: dict[str, Any]) -> str:
    if "dirty" not in made or made["dirty"] is None:
        return f"uncommitted changes {NOT_RECORDED}"
    return "with uncommitted changes" if made["dirty"] else "clean tree"


def _network(net: dict[str, Any]) -> str:
    where = ", ".join(net.get("games") or [])
    digest = f"sha256 `{net['sha256']}`" if net.get("sha256") else "no file found"
    return f"`{net['network']}` ({where + ', ' if where else ''}{digest})"


def _code(code: Any) -> str:
    if code == "built in":
        return "built into splendor-env (the version and commit above)"
    digest = f"sha256 `{code['sha256']}`" if code.get("sha256") else "no file found"
    if "distribution" in code:  # (older cards named the distribution only)
        shown = f", module file {digest}" if code.get("sha256") else ""
        return f"`{code['module']}` from the distribution `{code['distribution']}` {code['version']}{shown}"
    return f"`{code['module']}`, module file `{code['file']}` ({digest})"


def provenance_lines(card: dict[str, Any]) -> list[str]:
    """The card's provenance as Markdown: the code, the networks and their sha256, the machine, the
    protocol; what an older card did not record is said to be ``not recorded``."""
    made, prov = card["made"], card.get("provenance", {})
    agent = prov.get("agent")
    lines = [
        "",
        "## Provenance",
        "",
        f"- Package: splendor-env {made.get('version', NOT_RECORDED)}, commit {made['commit']} ({_dirty(made)}).",
        f"- Protocol: version {card['protocol']['version']}.",
        f"- Agent: `{card['spec']}`.",
    ]
    if agent is None:
        lines.append(f"- Its networks and code: {NOT_RECORDED}.")
    else:
        nets = agent["networks"]
        lines.append("- Its networks: " + ("; ".join(map(_network, nets)) if nets else "none") + ".")
        lines.append(f"- Its code: {_code(agent['code'])}.")
    refs = prov.get("references")
    if refs is None:
        lines.append(f"- The references' networks: {NOT_RECORDED}.")
    else:
        for ref, nets in refs.items():
            if nets:
                lines.append(f"- Reference `{ref}` plays " + "; ".join(map(_network, nets)) + ".")
    lines.append(f"- Machine: {made['machine']}.")
    return lines


def pieces_lines(cost: dict[str, Any]) -> list[str]:
    """The card's pieces (each invocation that played into its folder) as a Markdown table."""
    if "pieces" not in cost:
        return ["", "## Pieces", "", f"The invocations that played it: {NOT_RECORDED}."]
    lines = [
        "",
        "## Pieces",
        "",
        "| start | end | wall s | CPU s | games | commit | ended |",
        "|---|---|---|---|---|---|---|",
    ]
    for p in cost["pieces"]:
        commit = p["commit"] + (" (uncommitted changes)" if p.get("dirty") else "")
        lines.append(
            f"| {p['start']} | {p['end']} | {p['wall_s']:.0f} | {p['cpu_s']:.0f} | {p.get('games', '?')} "
            f"| {commit} | {p['ended']} |"
        )
    return lines


def card_markdown(card: dict[str, Any]) -> str:
    """The card as a Markdown page: the rating, per configuration a table of the references, the cost,
    the provenance and the pieces (a card from before they were recorded says so)."""
    made, cost, rating = card["made"], card["cost"], card["rating"]
    version = card["protocol"]["version"]
    pieces = len(cost.get("pieces", []))
    lines = [
        f"# Benchmark card: `{card['spec']}`",
        "",
        f"**{elo_text(rating)}** (95%) in {rating['config']}, on the fixed scale of "
        f"protocol {version} ({card['kind']} card, {card['games_per_reference']} games "
        "per reference and configuration, seat-rotated, fixed deals).",
        "",
        f"{'Completed' if pieces else 'Made'} {made['date']}, commit {made['commit']}, on {made['machine']}. "
        f"Cost: {cost['games']} games in {cost['wall_s']:.0f} s wall, {cost['cpu_s']:.0f} s CPU, "
        f"{cost['workers']} worker(s) ({cost['backend']})"
        + (f", over {pieces} pieces (below)." if pieces > 1 else ".")
        + (
            f" Not counted: {cost['unrecorded_games']} of its games, played before its pieces were recorded."
            if cost.get("unrecorded_games")
            else ""
        ),
    ]
    if version == 1:
        lines += [
            "",
            "Protocol 1: one anchor per reference, measured in the 2-player base game and used by convention "
            "in every game (its `az:sims=1000` anchor was measured with the network `ppo_2p`, not `az_2p`).",
        ]
    for c in card["configs"]:
        lines += [
            "",
            f"## {c['config']}: {elo_text(c)}",
            "",
            f"Win rate of an equal match: {_pct(1 / c['players'])}%.",
            "",
            "| reference | anchor Elo | games | win % | 95% interval |",
            "|---|---|---|---|---|",
        ]
        for r in c["results"]:
            lines.append(
                f"| `{r['reference']}` | {_anchor(r['anchor_elo'])} | {r['games']} | {_pct(r['win_rate'])} | "
                f"{_pct(r['ci95'][0])}-{_pct(r['ci95'][1])} |"
            )
        if c["sat_out"]:
            lines += [
                "",
                "Sat out (cannot play this game): " + ", ".join(f"`{s}`" for s in c["sat_out"]) + ".",
            ]
        if c.get("itself"):
            lines += ["", f"Not played against itself (`{c['itself'][0]}`: an even match by symmetry)."]
    if card["skipped"]:
        lines += ["", "## Not played", ""]
        lines += [f"- {k}: {v}" for k, v in card["skipped"].items()]
    lines += provenance_lines(card) + pieces_lines(cost)
    return "\n".join(lines) + "\n"


def wrapped(label: str, width: int = 26) -> str:
    """A game's label broken after its ``+`` signs into lines of about ``width`` characters, so a
    module game's label ("2p cities+trading_posts+orient+strongholds") fits over one panel."""
    lines = [""]
    for part in label.replace("+", "+\n").split("\n"):
        if lines[-1] and len(lines[-1]) + len(part) > width:
            lines.append("")
        lines[-1] += part
    return "\n".join(lines)


def card_figure(card: dict[str, Any]) -> Any:
    """Win rate against each reference per configuration (:func:`~training.matches.report.win_rate_panel`)
    and the Elo of each configuration among the references' anchors."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    configs = card["configs"]
    k = len(configs)
    # up to four panels a row: a card of all six games would otherwise be one unreadable strip
    cols = min(k + 1, 4)
    rows_of_panels = -(-(k + 1) // cols)
    fig, grid = plt.subplots(rows_of_panels, cols, figsize=(4.2 * cols, 3.4 * rows_of_panels), squeeze=False)
    axes = grid.ravel()
    for ax in axes[k + 1 :]:
        ax.set_visible(False)
    for ax, c in zip(axes, configs, strict=False):
        rows = c["results"]
        win_rate_panel(
            ax,
            [r["reference"] for r in rows],
            [r["win_rate"] for r in rows],
            [r["ci95"] for r in rows],
            f"{wrapped(c['config'])}: win rate vs reference",
            even=1.0 / c["players"],
        )
    ax = axes[k]
    for x, c in enumerate(configs):
        for r in c["results"]:
            if r["anchor_elo"] is not None:
                ax.plot([x - 0.3, x + 0.3], [r["anchor_elo"]] * 2, color="grey", lw=0.6)
                ax.text(x + 0.32, r["anchor_elo"], r["reference"], fontsize=6, va="center", color="grey")
    rated = [(x, c) for x, c in enumerate(configs) if c["elo"] is not None]
    err = [[c["elo"] - c["elo_ci95"][0] for _, c in rated], [c["elo_ci95"][1] - c["elo"] for _, c in rated]]
    ax.errorbar(
        [x for x, _ in rated], [c["elo"] for _, c in rated], yerr=err, fmt="o", capsize=4, color="tab:blue"
    )
    ax.set_xticks(range(k), [c["config"] for c in configs], rotation=40, ha="right", fontsize=7)
    ax.set_xlim(-0.5, k - 0.5)
    ax.set_title(f"Elo, protocol {card['protocol']['version']} scale (95%)", fontsize=10)
    fig.suptitle(f"{card['spec']}: {card['kind']} benchmark card")
    fig.tight_layout()
    return fig


def write_card(card: dict[str, Any], out: Path) -> list[Path]:
    """``card.json``, ``card.md`` and ``card.png`` in ``out`` (made if missing)."""
    out.mkdir(parents=True, exist_ok=True)
    paths = [out / "card.json", out / "card.md", out / "card.png"]
    save_text(paths[0], json.dumps(card, indent=1) + "\n")
    save_text(paths[1], card_markdown(card))
    save_figure(card_figure(card), paths[2])
    return paths


__all__ = ["card_figure", "card_markdown", "elo_text", "pieces_lines", "provenance_lines", "write_card"]
