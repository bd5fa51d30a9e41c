"""The conversation with one bot, as a pure state machine (h11's shape).

The referee tells the machine what it sends (``send_hello``,
``send_request``, ``send_game_over``: each returns the bytes to write) and
feeds it what the bot wrote (``receive_data``; ``b""`` is the end of the
input), then asks ``next_event()`` what happened (``receive_reply`` does both
in one call, the per-decision path).  Which message may come
when is decided here and nowhere else:

    state         the bot may write                    leaves on
    START         nothing                              send_hello → AWAIT_READY
    AWAIT_READY   one `ready` (or `bye`) line           Ready → IDLE, Bye → DONE
    IDLE          nothing at all, not even a byte      send_request → AWAIT_ACTION
                                                       (only if it wrote nothing)
    AWAIT_ACTION  one `action` line for that request   Action → IDLE
    DONE          anything (it is no longer read)      —
    FAULTED       — (the first fault is repeated)      —

``send_game_over`` leads from any state after hello to DONE.  ``next_event()`` returns
one of

* ``NEED_DATA``: nothing complete yet; feed more bytes;
* ``Ready`` / ``Action``: the message that was due, checked (an action names
  the pending request and one of its legal actions);
* ``Bye``: instead of ``ready``, the bot declines this game and any other
  (protocol version 2: only a process that already played a game may);
* ``Fault``: the bot broke the protocol; ``kind`` is one of ``FAULT_KINDS``
  (the referee's reason codes of the same names) and ``detail`` says how;
  the machine is FAULTED from then on; ``line`` holds the offending line
  (or what had arrived of it) when there is one;
* ``EndOfInput``: the bot's output ended on a line boundary (why it ended,
  an exit or a closed stdout, is for the process to say);
* ``PartialLine``: the output ended in the middle of a line, which is never
  a message: a final line without its newline is not dropped silently.

Events (``event`` lines) are not turns: the bot never answers them, so they
are encoded once for every seat with ``codec.encode_event`` and need no state.
An action that is not in the legal list is ``invalid_action`` when the game's
notation cannot read it at all (``is_action``, given by the referee, which
knows the game) and ``illegal_action`` when it is a well-formed action that is
not legal now; the check runs only on that fault path.
No I/O and no clock: the caller times the bot.  The per-decision path is a
few attribute checks plus the framing and the reply check.
"""

from __future__ import annotations

import collections
import enum
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, Final

from .codec import Violation, decode_bot_line, decode_plain_action, encode_game_over, encode_hello, encode_request
from .framing import TOO_LONG, LineBuffer
from .messages import ActionMsg, ByeMsg, HelloMsg, ReadyMsg

__all__ = [
    "FAULT_KINDS", "NEED_DATA", "Action", "Bye", "Conversation", "EndOfInput", "Fault", "LocalProtocolError",
    "PartialLine", "Ready", "State", "read_action",
]


class State(enum.Enum):
    START = "start"
    AWAIT_READY = "await_ready"
    IDLE = "idle"
    AWAIT_ACTION = "await_action"
    DONE = "done"
    FAULTED = "faulted"


START, AWAIT_READY, IDLE, AWAIT_ACTION, DONE, FAULTED = State  # module constants: a cheaper lookup

# Every kind a Fault may have.  The referee's FaultReason has a code of each name.
FAULT_KINDS: Final = frozenset({
    "invalid_utf8", "invalid_json", "wrong_message", "wrong_request", "invalid_action", "illegal_action",
    "unexpected_message", "line_too_long",
})
UNEXPECTED: Final = "wrote output when no request was pending"


class _NeedData:
    __slots__ = ()

    def __repr__(self) -> str:
        return "NEED_DATA"


NEED_DATA: Final = _NeedData()


# Events are small classes with slots, not frozen dataclasses: the per-decision
# path makes one Action per reply, and a frozen one costs twice as much to make.
# Treat them as immutable.

@dataclass(slots=True)
class Ready:
    name: str
    events: bool
    games: int | None = 1  # games this process plays one after another; None: many
    tables: int = 1  # games it plays at once


@dataclass(slots=True)
class Bye:
    """The bot declined the game it was offered, and any later one."""


@dataclass(slots=True)
class Action:
    id: int
    action: str


@dataclass(slots=True)
class Fault:
    kind: str  # one of FAULT_KINDS
    detail: str
    line: bytes | None = field(default=None, compare=False)  # the offending line, when there is one


@dataclass(slots=True)
class EndOfInput:
    """The bot's output ended after a complete line (or before any)."""


@dataclass(slots=True)
class PartialLine:
    """The bot's output ended in the middle of a line of ``size`` bytes (``line``)."""

    size: int
    line: bytes = field(default=b"", compare=False)


class LocalProtocolError(RuntimeError):
    """The referee asked for a send its own state does not allow: our bug, never the bot's."""


def _short(text: str, limit: int = 40) -> str:
    return text if len(text) <= limit else text[:limit] + "…"


def _violation(msg: Violation, line: bytes) -> Fault:
    detail = msg.detail
    if msg.kind == "invalid_json":  # say what the line was: usually a debug print on stdout
        detail += f"; the line begins {line[:40].decode('utf-8', 'backslashreplace')!r}"
        if len(line) > 40:
            detail += f" ({len(line)} bytes)"
    return Fault(msg.kind, detail, line)


# The plain form's action text (its bytes between the quotes) of actions already seen in a
# legal reply, and the action they name: any byte string in here is one the plain form's
# pattern accepts, so a reply ``{"type":"action","id":<rid>,"action":"<these bytes>"}`` is
# known to read as that action without the pattern (``Conversation.receive_reply``).
# Filled only by ``read_action`` from lines the pattern matched; a game has a few hundred.
_PLAIN_ACTIONS: dict[bytes, str] = {}
_PLAIN_ACTIONS_MAX = 1 << 16


def read_action(line: bytes, rid: int, legal: list[str],
                is_action: Callable[[str], bool] | None = None) -> Action | Fault:
    """A complete reply line to request ``rid`` judged: the action it names, or what is wrong with it.

    ``is_action`` (the game's notation) tells an unreadable action (``invalid_action``)
    from a readable one that is not legal now (``illegal_action``); without it,
    every action outside ``legal`` is illegal."""
    plain = decode_plain_action(line)
    if plain is not None:
        reply_id, action = plain
        if reply_id == rid and action in legal and len(_PLAIN_ACTIONS) < _PLAIN_ACTIONS_MAX:
            _PLAIN_ACTIONS[action.encode("ascii")] = action
    else:
        msg = decode_bot_line(line)
        if isinstance(msg, Violation):
            return _violation(msg, line)
        if not isinstance(msg, ActionMsg):
            return Fault("wrong_message", f"expected action, got {msg.type}", line)  # type: ignore[attr-defined]
        reply_id, action = msg.id, msg.action
    if reply_id != rid:
        try:
            shown = str(reply_id)
        except ValueError:  # more digits than Python will print
            shown = "(a number too long to show)"
        return Fault("wrong_request", f"answered request {_short(shown)}, expected {rid}", line)
    if action not in legal:
        if is_action is not None and not is_action(action):
            return Fault("invalid_action", f"{_short(action)!r} is not an action of this game", line)
        return Fault("illegal_action", f"{_short(action)!r} is not among the {len(legal)} legal actions", line)
    return Action(reply_id, action)


def _read_ready(line: bytes) -> Ready | Bye | Fault:
    msg = decode_bot_line(line)
    if isinstance(msg, Violation):
        return _violation(msg, line)
    if isinstance(msg, ByeMsg):
        return Bye()
    if not isinstance(msg, ReadyMsg):
        return Fault("wrong_message", f"expected ready, got {msg.type}", line)  # type: ignore[attr-defined]
    many = msg.games == "many" or (msg.tables > 1 and "games" not in msg.model_fields_set)
    return Ready(msg.name, msg.events, None if many else msg.games, msg.tables)  # type: ignore[arg-type]


class Conversation:
    """One bot's side of one game: what the referee sent, what the bot wrote, what it meant."""

    __slots__ = ("state", "max_line_bytes", "is_action", "_framer", "_lines", "_eof", "_fault", "_rid", "_legal")

    def __init__(self, max_line_bytes: int = 1 << 20, is_action: Callable[[str], bool] | None = None) -> None:
        self.state = START
        self.max_line_bytes = max_line_bytes
        self.is_action = is_action  # the game's notation: invalid vs illegal (see read_action)
        self._framer = LineBuffer(max_line_bytes)
        self._lines: collections.deque[Any] = collections.deque()
        self._eof = False
        self._fault: Fault | None = None
        self._rid = 0
        self._legal: list[str] = []

    # -- what the referee sends ------------------------------------------------

    def send_hello(self, hello: HelloMsg) -> bytes:
        if self.state is not START:
            raise LocalProtocolError(f"hello in state {self.state.name}")
        self.state = AWAIT_READY
        return encode_hello(hello)

    def send_request(self, id: int, seat: int, decision: str, state: dict[str, Any], legal: list[str],
                     time_ms: int, legal_json: bytes | None = None) -> bytes | Fault | EndOfInput:
        """The request's line, if it may go out: the bot is IDLE and wrote nothing
        since its last message.  If it did write (or its output ended), nothing
        is sent and this returns what happened instead, as ``next_event()`` would:
        the Fault, or EndOfInput.  The check is part of the transition, so the
        per-decision path asks nothing else.  ``legal_json``: ``legal`` already
        encoded, if the caller has it (``codec.encode_request``)."""
        if self.state is not IDLE:
            raise LocalProtocolError(f"request in state {self.state.name}")
        if self._lines or self._framer._buf or self._eof:  # (_buf: .pending, cheaper)
            return self.next_event()  # type: ignore[return-value]
        self.state = AWAIT_ACTION
        self._rid = id
        self._legal = legal
        return encode_request(id, seat, decision, state, legal, time_ms, legal_json)

    def send_game_over(self, outcome: dict[str, Any], result: str) -> bytes:
        if self.state is START:
            raise LocalProtocolError("game_over before hello")
        self.state = DONE
        return encode_game_over(outcome, result)

    # -- what the bot wrote -----------------------------------------------------

    def receive_data(self, data: bytes) -> None:
        """Bytes from the bot's stdout, in order; ``b""`` when it ended."""
        if not data:
            self._eof = True
        elif self.state is not DONE:
            self._lines.extend(self._framer.feed(data))

    def receive_reply(self, data: bytes) -> Ready | Bye | Action | Fault | EndOfInput | PartialLine | _NeedData:
        """``receive_data(data)`` then ``next_event()`` in one call: the per-decision
        path.  A reply that came whole in one read skips the line queue; one in the
        plain form naming an action seen before (``_PLAIN_ACTIONS``) skips the pattern
        too: it is then that one line, with that id and that action, exactly as
        ``read_action`` would read it."""
        if self.state is AWAIT_ACTION and not self._lines:
            line = self._framer.whole_line(data)
            if line is not None:
                head = b'{"type":"action","id":%d,"action":"' % self._rid
                if line.startswith(head) and line.endswith(b'"}'):
                    action = _PLAIN_ACTIONS.get(line[len(head):-2])
                    if action is not None and action in self._legal:
                        self.state = IDLE
                        return Action(self._rid, action)
                event = read_action(line, self._rid, self._legal, self.is_action)
                if type(event) is Action:
                    self.state = IDLE
                    return event
                return self._faulted(event)  # type: ignore[arg-type]
        self.receive_data(data)
        return self.next_event()

    @property
    def pending_bytes(self) -> int:
        """Bytes of a line begun but not finished."""
        return self._framer.pending

    @property
    def pending_line(self) -> bytes:
        """The line begun but not finished, as far as it arrived."""
        return bytes(self._framer._buf)

    @property
    def request_id(self) -> int:
        """The id of the last request sent (0 before the first)."""
        return self._rid

    @property
    def request_legal(self) -> list[str]:
        """The legal list of the last request sent."""
        return self._legal

    def next_event(self) -> Ready | Bye | Action | Fault | EndOfInput | PartialLine | _NeedData:
        state = self.state
        lines = self._lines
        if state is AWAIT_ACTION:
            if lines:
                line = lines.popleft()
                if line is TOO_LONG:
                    return self._faulted(Fault("line_too_long", f"a line longer than {self.max_line_bytes} bytes"))
                event = read_action(line, self._rid, self._legal, self.is_action)
                if type(event) is Action:
                    self.state = IDLE
                    return event
                return self._faulted(event)  # type: ignore[arg-type]
            return self._end() if self._eof else NEED_DATA
        if state is IDLE or state is START:
            if lines or self._framer._buf:  # (_buf: .pending, cheaper)
                first = lines[0] if lines else bytes(self._framer._buf)
                return self._faulted(Fault("unexpected_message", UNEXPECTED, first if type(first) is bytes else None))
            return EndOfInput() if self._eof else NEED_DATA
        if state is AWAIT_READY:
            if lines:
                line = lines.popleft()
                if line is TOO_LONG:
                    return self._faulted(Fault("line_too_long", f"a line longer than {self.max_line_bytes} bytes"))
                ready = _read_ready(line)
                if type(ready) is Ready:
                    self.state = IDLE
                    return ready
                if type(ready) is Bye:
                    self.state = DONE
                    return ready
                return self._faulted(ready)  # type: ignore[arg-type]
            return self._end() if self._eof else NEED_DATA
        if state is FAULTED:
            return self._fault  # type: ignore[return-value]
        return EndOfInput() if self._eof else NEED_DATA  # DONE

    def _end(self) -> EndOfInput | PartialLine:
        pending = self._framer.pending
        return PartialLine(pending, bytes(self._framer._buf)) if pending else EndOfInput()

    def _faulted(self, fault: Fault) -> Fault:
        self.state = FAULTED
        self._fault = fault
        self._lines.clear()
        return fault
