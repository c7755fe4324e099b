"""The config of expert iteration (:mod:`training.expert_iteration.loop`): YAML -> typed pydantic models.

Why a second schema next to :mod:`training.common.config`: a search-training run has
other knobs (self-play search, replay buffer, gate) and none of PPO's; the file is
read by the one loader there (:class:`training.common.config.ConfigReader`: the YAML
checks, the defaults under ``--set`` overrides, one-line errors naming the key), so
both configs are read and fail the same way. Only the checks across fields are here.
"""

from __future__ import annotations

from typing import Any, Literal

from pydantic import Field

from agents.players.az import PARAMS as AZ_PARAMS
from agents.search.driver import LANE_TREES
from training.common.config import (
    ACTIVATIONS,
    ConfigReader,
    Float,
    Int,
    OptFloat,
    Players,
    Section,
    Str,
    check_agent_spec,
    check_modules,
    player_counts,
    require,
)

#: ``init`` value meaning "a new, untrained card-slot network for the config's game".
FRESH = "fresh"
EVAL_MODES = ("ppo", "az")


class NetworkSection(Section):
    """The card-slot network built when ``init: fresh`` (ignored when starting from a model)."""

    net_arch: list[Int(ge=1, le=4096)] = Field(default=[128, 128], min_length=1)
    activation: Literal[ACTIVATIONS] = "relu"
    # the critic trunk: 0 = the plain MLP of net_arch (as every shipped network); K > 0 = a layer of
    # critic_width, then K residual blocks of it (x + W2 relu(W1 x)): a larger critic for the search's leaves
    critic_blocks: Int(ge=0, le=64) = 0
    critic_width: Int(ge=1, le=4096) = 256


class SelfPlaySection(Section):
    """Self-play: every seat the same ``az`` agent with the current (gated) network, or, in
    ``opponent_share`` of the games, one seat against fixed ``opponents``."""

    games: Int(ge=1) = 32  # games per iteration
    sims: Int(ge=2) = 100  # simulations per move
    c: Float(ge=0) = AZ_PARAMS["c"][1]  # PUCT exploration constant (az option, its default)
    fpu: Float(ge=0) = AZ_PARAMS["fpu"][1]  # first-play urgency reduction (az option, its default)
    batch: Int(ge=1, le=64) = AZ_PARAMS["batch"][1]  # leaves per network call (az option, its default)
    sample_moves: Int(ge=0) = 20  # the first K decisions of a game sample a move from the visit counts
    temperature: Float(gt=0) = 1.0  # of that sampling: p ~ visits^(1/temperature)
    target_temperature: Float(gt=0) = 1.0  # the policy target is visits^(1/this); below 1 sharpens it
    max_turns: Int(ge=1) = 100  # a longer game is truncated (value target 0 for every seat)
    games_per_job: Int(ge=1) = 8  # games sent to a worker at a time
    # agent specs (greedy, ppo:MODEL, ...): opponent_share of the games seat the search in one seat
    # and one of these in every other seat; only the search's seats are recorded
    opponents: list[Str] = []
    opponent_share: Float(ge=0, le=1) = 0.0
    # a worker searches its job's games in step, batched_games at once (training.expert_iteration.selfplay:
    # the same games and targets as one at a time); batched: their leaves go to the network in torch on
    # batched_device ("cuda": a GPU, batched_lane_trees trees per call), else numba on the worker's core
    batched: bool = False
    batched_device: Literal["auto", "cpu", "cuda"] = "cpu"
    batched_games: Int(ge=1) = 256
    batched_lane_trees: Int(ge=1) = LANE_TREES
    # playout-cap randomisation: a decision gets the full search (sims) with probability full_share, else
    # cheap_sims simulations played greedily and not recorded; 1.0 = every decision a full search
    full_share: Float(gt=0, le=1) = 1.0
    cheap_sims: Int(ge=1) = 16
    # the root of the full searches: puct (the visit counts are the target) or gumbel (Gumbel AlphaZero:
    # gumbel_actions moves sampled, sequential halving, completed-Q target)
    root: Literal["puct", "gumbel"] = "puct"
    gumbel_actions: Int(ge=2) = 16
    record_share: Float(gt=0, le=1) = 1.0  # the share of a game's full-search decisions recorded (seeded)
    # keep the subtree of the moves played between two PUCT searches of a game where no card was drawn
    # and nothing but the decks is hidden (agents.search.subtree.same_information); its visits count in sims
    reuse: bool = False


class BufferSection(Section):
    capacity: Int(ge=1) = 100_000  # positions kept; the oldest go first


class TrainSection(Section):
    batch_size: Int(ge=1) = 256
    epochs: Float(gt=0) = 2  # passes over the buffer per iteration; below 1, that part of it, drawn at random
    learning_rate: Float(gt=0) = 1e-3  # Adam
    # the critic's own rate (its trunk and head); None = learning_rate, 0 = keep the start critic.
    # value_coef cannot slow the critic: its trunk is separate and Adam ignores a loss's scale
    value_learning_rate: OptFloat(ge=0) = None
    weight_decay: Float(ge=0) = 1e-4
    value_coef: Float(ge=0) = 1.0  # loss = cross-entropy to the visits + value_coef * value MSE
    # value target = (1 - w) * the game's result + w * the search's value of the position (its root q):
    # one result per game is a noisy target that a network memorises; q varies within a game
    search_value_weight: Float(ge=0, le=1) = 0.0
    max_grad_norm: Float(gt=0) = 1.0
    # auxiliary value targets: a head on the critic trunk predicts each position's final prestige margin
    # and turns left; loss += aux_coef * their MSE (0 = off: no head, the buffer as before)
    aux_coef: Float(ge=0) = 0.0
    min_positions: Int(ge=1) = 1_000  # no training until the buffer holds this many


class GateSection(Section):
    games: Int(ge=0) = 40  # seat-rotated games, new network against the previous one; 0 = always accept
    sims: Int(ge=2) = 32  # simulations per move of both sides
    # accept when gate_score (the mean of rate * n / 2 over the player counts) reaches it
    threshold: Float(ge=0, le=1) = 0.55


class EvalSection(Section):
    every: Int(ge=0) = 5  # iterations between evaluations against fixed opponents; 0 = never
    games: Int(ge=1) = 40  # per opponent and mode, seat-rotated
    opponents: list[Str] = ["greedy"]
    modes: list[Literal[EVAL_MODES]] = Field(
        default=["ppo", "az"], min_length=1
    )  # network alone / with search
    sims: Int(ge=2) = 32  # simulations per move of the az mode
    # each iteration, log how often the critic picks the winner of the new games, by the mover's turn
    # (new_winner_pick_0_9, _10_19, _20; the value report's rule); replays every decision of the games
    winner_pick: bool = False


class SearchTrainConfig(Section):
    players: Players = 2
    modules: list[Str] = []  # any of cities, trading_posts, orient, strongholds
    seed: Int(ge=0) = 0
    output_dir: Str = "runs/search_2p"
    iterations: Int(ge=1) = 1_000  # the run ends after this many (or at max_wall_minutes)
    max_wall_minutes: OptFloat(gt=0) = None  # stop cleanly (checkpointed) after the step that passes it
    # the whole run's limit over all its pieces (--resume): a piece stops after the step that passes it
    max_total_wall_minutes: OptFloat(gt=0) = None
    torch_threads: Int(ge=1) = 1
    device: Literal["auto", "cpu", "cuda"] = "auto"  # where the network trains; auto = cuda if available
    init: Str = FRESH  # a shipped model name (ppo_2p), a MaskablePPO .zip, or "fresh"
    # every K iterations keep the gated network as snapshots/best-NNNN.zip (N iterations done), so a
    # run's earlier networks can be compared and one shipped (training.ship --iteration N); 0 = none
    snapshot_every: Int(ge=0) = 0
    network: NetworkSection = NetworkSection()
    selfplay: SelfPlaySection = SelfPlaySection()
    buffer: BufferSection = BufferSection()
    train: TrainSection = TrainSection()
    gate: GateSection = GateSection()
    eval: EvalSection = EvalSection()

    @property
    def player_counts(self) -> list[int]:
        """``players`` as a sorted list of distinct counts."""
        return player_counts(self.players)


def _cross_checks(cfg: SearchTrainConfig, check_specs: bool) -> None:
    """Checks that involve several fields, the model files or the agent registry."""

    check = require
    check_modules(cfg.modules, check)
    check(bool(cfg.output_dir.strip()), "output_dir", "must not be empty")
    check(
        cfg.selfplay.games >= len(cfg.player_counts),
        "selfplay.games",
        f"must be >= the number of player counts ({len(cfg.player_counts)})",
    )
    check(
        cfg.train.min_positions <= cfg.buffer.capacity,
        "train.min_positions",
        f"must be <= buffer.capacity ({cfg.buffer.capacity}), or training never starts",
    )
    check(
        cfg.network.critic_blocks == 0 or cfg.network.activation == "relu",
        "network.critic_blocks",
        "a residual critic needs network.activation: relu (the search's numba network runs ReLU only)",
    )
    if cfg.init == FRESH:  # the network section is read only then
        check(
            len(cfg.network.net_arch) == 2,
            "network.net_arch",
            f"must be two layer widths, got {cfg.network.net_arch} (the search's numba network runs two-layer trunks)",
        )
        check(
            cfg.network.activation == "relu",
            "network.activation",
            f"must be relu (the search's numba network runs ReLU only), got {cfg.network.activation!r}",
        )
    sp = cfg.selfplay
    check(
        sp.full_share == 1 or sp.cheap_sims < sp.sims,
        "selfplay.cheap_sims",
        f"must be < selfplay.sims ({sp.sims}) when selfplay.full_share < 1",
    )
    check(
        not sp.reuse or sp.root == "puct",
        "selfplay.reuse",
        "keeps PUCT trees: it needs selfplay.root: puct (Gumbel's root starts each search afresh)",
    )
    if cfg.init != FRESH:
        from agents.nets.checkpoint import model_zip_problem
        from agents.nets.shipped import resolve_model

        try:
            path = str(resolve_model(cfg.init))
        except FileNotFoundError:
            path = cfg.init
        problem = model_zip_problem(path, cfg.modules)
        check(problem is None, "init", f"{problem} (or 'fresh' for a new network)")
    check(
        cfg.selfplay.opponent_share == 0 or bool(cfg.selfplay.opponents),
        "selfplay.opponent_share",
        f"is {cfg.selfplay.opponent_share} but selfplay.opponents is empty: name an agent (greedy) or set 0",
    )
    if check_specs:
        for i, spec in enumerate(cfg.selfplay.opponents):
            check_agent_spec(spec, f"selfplay.opponents[{i}]", cfg.player_counts, tuple(cfg.modules))
        for i, spec in enumerate(cfg.eval.opponents):
            check_agent_spec(spec, f"eval.opponents[{i}]", cfg.player_counts, tuple(cfg.modules))


_READER = ConfigReader(SearchTrainConfig, _cross_checks)
#: Parse and validate a raw mapping after the ``--set`` overrides.
from_dict = _READER.from_dict
#: Read a YAML config file, apply the overrides, parse and validate it.
load = _READER.load


def to_dict(cfg: SearchTrainConfig) -> dict[str, Any]:
    """Plain mapping (the run directory's config.yaml, the metrics JSON)."""
    return cfg.model_dump()
