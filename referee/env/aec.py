"""The engines as PettingZoo AEC environments (docs/learning.md).

One environment per game: ``aec_env("back-alley")``, ``aec_env("schmier")``,
``aec_env("pegs-and-jokers", players=6)``.  An episode is one whole game, as
``referee play`` plays it: ``reset(seed=S)`` deals what ``referee play --seed S``
deals, and the same actions give the same events.

* Agents ``player_0`` … ``player_{n-1}`` are the seats; ``teams[t]`` lists the
  agents of team ``t`` (RULES 0.2: seat mod the number of teams).
* An observation is ``{"observation": int32 vector, "action_mask": int8
  vector}``: the encoding of the seat's own view (``protocol.encoding``, a
  function of ``observe(seat)`` alone) and its legal action ids.  The mask is
  all zero for every agent but the one to act.
* Actions are ids of the game's fixed ``Discrete`` space.  Pegs and Jokers
  chooses one move in several steps (card, source, destination, …); the
  same agent stays in ``agent_selection`` until its move is complete.
* Rewards (``rewards=``): ``"score"`` (default) pays every agent its team's
  change of the game's own score when it happens — Back Alley and Schmier at
  each deal's end (the ``deal_score`` event), Pegs and Jokers whenever a peg
  of the team reaches home — so an agent's rewards over a game add up to its
  team's final score; ``"outcome"`` pays only at the end: +1 to the winning
  team, -1 to the others, 0 to all for a draw or an aborted game.
* An action id that is not legal now raises ``IllegalActionId`` and changes
  nothing; ``illegal="lose"`` wraps the environment in PettingZoo's
  ``TerminateIllegalWrapper`` (the game ends, the mover gets -1) instead.
"""

from __future__ import annotations

import operator
import random
from typing import Any, Literal

import numpy as np
from gymnasium import spaces
from pettingzoo import AECEnv  # type: ignore[import-untyped]
from pettingzoo.utils import wrappers  # type: ignore[import-untyped]

from protocol.encoding import Decision, Encoding, encoding_for
from referee.errors import UserFault
from referee.games import Event, GameSpec, GameState, get_game

__all__ = ["IllegalActionId", "InvalidEnvOption", "NotResetError", "RefereeAECEnv", "aec_env"]

Rewards = Literal["score", "outcome"]
_INT32 = np.dtype(np.int32)
_INT8 = np.dtype(np.int8)


class IllegalActionId(ValueError):
    """An action id that is not legal for the agent to act (its mask is 0 there)."""


class NotResetError(AttributeError):
    """``step`` or ``observe`` before the first ``reset`` (as PettingZoo's ``OrderEnforcingWrapper``)."""


class InvalidEnvOption(UserFault, ValueError):
    """An environment option that is unknown or out of range."""


def _names(game: str) -> str:
    return game.replace("-", "_")


class RefereeAECEnv(AECEnv):
    """One game of the referee as a PettingZoo ``AECEnv`` (see the module docstring)."""

    metadata: dict[str, Any] = {"name": "referee_v0", "render_modes": ["ansi", "human"], "is_parallelizable": False}

    def __init__(self, game: str, *, rewards: Rewards = "score", render_mode: str | None = None,
                 **options: Any) -> None:
        super().__init__()
        spec: GameSpec = get_game(game)
        self.spec = spec
        self.options: dict[str, Any] = spec.normalize_options(options)
        if rewards not in ("score", "outcome"):
            raise InvalidEnvOption(f"rewards must be 'score' or 'outcome', not {rewards!r}")
        if render_mode not in (None, "ansi", "human"):
            raise InvalidEnvOption(f"render_mode must be None, 'ansi' or 'human', not {render_mode!r}")
        self.render_mode = render_mode
        self.reward_mode: Rewards = rewards
        self.game = spec.name
        players = spec.num_seats(self.options)
        num_teams = spec.num_teams(self.options)
        suffix = f"_{players}p" if spec.name == "pegs-and-jokers" else ""
        self.metadata = {**self.metadata, "name": f"referee_{_names(spec.name)}{suffix}_v0"}
        self.encoding: Encoding = encoding_for(spec.name, self.options)
        self.possible_agents = [f"player_{s}" for s in range(players)]
        self._seat = {a: s for s, a in enumerate(self.possible_agents)}
        self.teams: list[list[str]] = [
            [a for s, a in enumerate(self.possible_agents) if spec.team_of(s, self.options) == t]
            for t in range(num_teams)
        ]
        self._team = [spec.team_of(s, self.options) for s in range(players)]
        enc = self.encoding
        obs_space = spaces.Dict({
            "observation": spaces.Box(np.array(enc.low, dtype=np.int32), np.array(enc.high, dtype=np.int32),
                                      dtype=np.int32),
            "action_mask": spaces.Box(0, 1, (enc.num_actions,), dtype=np.int8),
        })
        act_space = spaces.Discrete(enc.num_actions)
        # The same object on every call (api_test); one per agent, alike.
        self.observation_spaces = dict.fromkeys(self.possible_agents, obs_space)
        self.action_spaces = dict.fromkeys(self.possible_agents, act_space)
        self._multi = enc.end is not None  # actions of several tokens (Pegs and Jokers)
        #: The ``deal_score`` event's field that pays each team, where rewards are deal scores.
        self._paid_on: str | None = None
        if rewards == "score" and spec.name != "pegs-and-jokers":
            self._paid_on = "deal_scores" if spec.name == "back-alley" else "delta"
        self._num_actions = enc.num_actions
        self._seed_rng = random.Random()
        self.game_state: GameState | None = None
        #: Every engine event of the game so far (the record's god view, ``Event.to`` says who sees it).
        self.events: list[Event] = []
        #: ``(seat, action text)`` of every decision applied so far, as a record's decision lines.
        self.decisions: list[tuple[int, str]] = []
        #: The seed of the running game (``reset``).
        self.seed: int | None = None
        self.agents: list[str] = []

    # -- the spaces ----------------------------------------------------------------

    def observation_space(self, agent: str) -> spaces.Space:
        return self.observation_spaces[agent]

    def action_space(self, agent: str) -> spaces.Space:
        return self.action_spaces[agent]

    # -- reset -----------------------------------------------------------------------

    def reset(self, seed: int | None = None, options: dict[str, Any] | None = None) -> None:
        """A new game.  ``seed=S`` deals what ``referee play --seed S`` deals; without
        a seed the next game's seed is drawn from the last seeded one (or at random).
        ``options`` is accepted, as PettingZoo's API asks, and ignored: the game's
        options are the environment's (``aec_env(game, **options)``)."""
        if seed is not None:
            self._seed_rng = random.Random(seed)
            game_seed = operator.index(seed)
        else:
            game_seed = self._seed_rng.getrandbits(31)
        self.seed = game_seed
        state, events = self.spec.new_game(game_seed, self.options)
        self.game_state = state
        self.events = list(events)
        self.decisions = []
        self.agents = self.possible_agents[:]
        self.rewards = dict.fromkeys(self.agents, 0.0)
        self._cumulative_rewards = dict.fromkeys(self.agents, 0.0)
        self.terminations = dict.fromkeys(self.agents, False)
        self.truncations = dict.fromkeys(self.agents, False)
        self.infos: dict[str, dict[str, Any]] = {a: {} for a in self.agents}
        self._rewards_dirty = False
        self._team_home = [0] * len(self.teams)
        self._begin_decision()

    def _begin_decision(self) -> None:
        state = self.game_state
        assert state is not None
        seat = state.to_act()
        self._prefix: tuple[int, ...] = ()
        self._view: dict[str, Any] | None = None  # the actor's engine view, kept for the steps of one move
        self._decision: Decision | None = None
        self._mask: bytearray | None = None
        if seat is None:
            self._actor = -1
            return
        self._actor = seat
        self.agent_selection = self.possible_agents[seat]

    # -- observe ---------------------------------------------------------------------

    def observe(self, agent: str) -> dict[str, np.ndarray]:
        state = self.game_state
        if state is None:
            raise NotResetError("observe() before reset()")
        seat = self._seat[agent]
        # The agent to act, unless a wrapper ended the game (TerminateIllegalWrapper).
        own = seat == self._actor and not self.terminations.get(agent, True)
        if own and self._multi:  # the state stands still during the steps of one move: one view
            view = self._view
            if view is None:
                view = self._view = state.observe(seat)
            vec = self.encoding.encode(view, self._prefix)
        else:
            vec = self.encoding.encode(state.observe(seat), self._prefix if own else ())
        # Fresh arrays per observation: the caller may keep or change them.
        mask = bytearray(self._current_mask()) if own else bytearray(self._num_actions)
        return {"observation": np.frombuffer(vec, dtype=_INT32), "action_mask": np.frombuffer(mask, dtype=_INT8)}

    def _current_mask(self) -> bytearray:
        mask = self._mask
        if mask is None:
            state = self.game_state
            assert state is not None
            if self._multi:
                if self._decision is None:
                    self._decision = self.encoding.decision(state.legal_actions())
                mask = self._decision.mask(self._prefix)
            else:
                mask = self.encoding.mask(state.legal_actions())
            self._mask = mask
        return mask

    def legal_action_ids(self) -> list[int]:
        """The ids the agent to act may choose now (the non-zero entries of its mask)."""
        if self._actor < 0:
            return []
        return [i for i, m in enumerate(self._current_mask()) if m]

    # -- step ------------------------------------------------------------------------

    def step(self, action: Any) -> None:
        if self.game_state is None:
            raise NotResetError("step() before reset()")
        agent = self.agent_selection
        if self.terminations[agent] or self.truncations[agent]:
            self._was_dead_step(action)
            return
        try:
            a = operator.index(action)
        except TypeError:
            raise IllegalActionId(f"an action is an integer id, not {action!r}") from None
        mask = self._current_mask()
        if not 0 <= a < len(mask) or not mask[a]:
            legal = [i for i, m in enumerate(mask) if m]
            raise IllegalActionId(f"action {a} is not legal for {agent} now (legal ids: {legal})")
        state = self.game_state
        assert state is not None
        if self._rewards_dirty:
            for k in self.rewards:
                self.rewards[k] = 0.0
            self._rewards_dirty = False
        self._cumulative_rewards[agent] = 0.0
        if self._multi:
            prefix = self._prefix + (a,)
            decision = self._decision
            assert decision is not None
            text = decision.text(prefix)
            if text is None:  # more steps of the same decision: the same agent goes on
                self._prefix = prefix
                self._mask = None
                return
        else:
            text = self.encoding.action_names[a]
        events = state.apply(text)
        self.events += events
        self.decisions.append((self._actor, text))
        paid_on = self._paid_on
        if paid_on is None:
            self._score(events)
        else:  # Back Alley, Schmier: a deal's score (the hot path: no call unless it is there)
            for e in events:
                if e.data["type"] == "deal_score":
                    self._pay([float(x) for x in e.data[paid_on]])
        # The next decision (``_begin_decision``, inlined on the hot path).
        self._view = None
        self._prefix = ()
        self._decision = None
        self._mask = None
        seat = state.to_act()
        if seat is None:
            self._actor = -1
            for k in self.agents:
                self.terminations[k] = True
            self._deads_step_first()
        else:
            self._actor = seat
            self.agent_selection = self.possible_agents[seat]

    def _score(self, events: list[Event]) -> None:
        """Rewards of a step, where they are not a deal's score (``_paid_on``)."""
        state = self.game_state
        assert state is not None
        if self.reward_mode == "score":  # Pegs and Jokers: the pegs home of each team
            home = list(state.team_home())  # type: ignore[attr-defined]
            if home != self._team_home:
                self._pay([float(h - o) for h, o in zip(home, self._team_home, strict=True)])
                self._team_home = home
            return
        outcome = state.outcome()
        if outcome is not None and outcome.status == "win":
            self._pay([1.0 if t in outcome.winners else -1.0 for t in range(len(self.teams))])

    def _pay(self, per_team: list[float]) -> None:
        team = self._team
        rewards = self.rewards
        cumulative = self._cumulative_rewards
        for s, agent in enumerate(self.possible_agents):
            r = per_team[team[s]]
            rewards[agent] = r
            cumulative[agent] += r
        self._rewards_dirty = True

    # -- rendering ---------------------------------------------------------------------

    def render(self) -> str | None:
        """One line: the game, its seed and the agent to act with its legal actions (or the
        outcome).  ``ansi`` returns it; ``human`` prints it and returns ``None``."""
        if self.render_mode is None:
            return None
        line = self._render_line()
        if self.render_mode == "human":
            print(line)
            return None
        return line

    def _render_line(self) -> str:
        state = self.game_state
        if state is None:
            return f"{self.game}: not started"
        outcome = state.outcome()
        if outcome is not None:
            return (f"{self.game} seed {self.seed}: over, {outcome.status} "
                    f"{list(outcome.winners)} {list(outcome.scores)}")
        return (f"{self.game} seed {self.seed}: {self.agent_selection} to {state.decision()}; "
                f"legal: {' '.join(state.legal_actions())}")

    def close(self) -> None:
        pass


def aec_env(game: str, *, illegal: Literal["raise", "lose"] = "raise", rewards: Rewards = "score",
            render_mode: str | None = None, **options: Any) -> AECEnv:
    """The PettingZoo AEC environment of ``game`` (``"back-alley"``, ``"schmier"``,
    ``"pegs-and-jokers"``) with its game ``options`` (e.g. ``players=6``).

    ``illegal="raise"`` (default): the environment itself, which refuses an id that is
    not legal now — out of range or masked out — with ``IllegalActionId`` and changes
    nothing, and refuses ``step``/``observe`` before ``reset`` (what PettingZoo's
    ``AssertOutOfBoundsWrapper`` and ``OrderEnforcingWrapper`` would check, without
    their cost per step).  ``illegal="lose"``: wrapped in PettingZoo's
    ``TerminateIllegalWrapper``: an illegal id ends the game, the mover gets -1 and
    the others 0.  ``env.unwrapped`` is the ``RefereeAECEnv`` either way."""
    if illegal not in ("raise", "lose"):
        raise InvalidEnvOption(f"illegal must be 'raise' or 'lose', not {illegal!r}")
    env: AECEnv = RefereeAECEnv(game, rewards=rewards, render_mode=render_mode, **options)
    if illegal == "lose":
        env = wrappers.OrderEnforcingWrapper(wrappers.TerminateIllegalWrapper(env, illegal_reward=-1))
    return env
