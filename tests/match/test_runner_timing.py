"""The runner's timing, time bank and fault logic with fake bots on a mock clock.

Every test takes ``autojump_clock`` (Trio's ``MockClock(autojump_threshold=0)``):
virtual time jumps straight to the next deadline, so a bot that "thinks" for
0.251 s does so exactly and at once, whatever the machine's load.  The same
paths with real processes (what the OS does) are in test_faults*.py.
"""

from __future__ import annotations

import pytest
import trio

from referee.match import runner
from referee.match.record import read_record
from referee.match.types import FaultReason, Limits
from referee.match.verify import verify_record

from .fakes import FakeBot, action, handshake, play, player

LIMITS = Limits(handshake_s=2.0, decision_s=0.25, grace_s=0.1, term_s=0.1, sandbox="off")
R = FaultReason


def with_limits(**changes) -> Limits:
    return Limits(**{**LIMITS.to_json(), **changes})


def slow_on(n: int, seconds: float, otherwise: float = 0.0):
    return lambda k: seconds if k == n else otherwise


def result_decisions(result, seat: int) -> int:
    rec = read_record(result.record_path)
    return sum(1 for e in rec.entries if e.record == "decision" and e.seat == seat)


def assert_forfeit(result, seat: int, reason: FaultReason, message: str) -> None:
    assert result.outcome.status == "forfeit", result.outcome
    assert result.fault is not None and result.fault.seat == seat and result.fault.reason is reason, result.fault
    assert message in result.fault.message, result.fault.message
    assert result.outcome.winners == (1 - seat % 2,)


# -- the decision limit and the lazily moved deadline -------------------------------------------------


async def test_a_game_of_fake_bots_is_played_to_the_end_and_its_record_verifies(autojump_clock, tmp_path):
    result, bots = await play({s: player(lambda n: 0.1) for s in range(4)}, LIMITS, record_path=tmp_path / "r.jsonl")
    assert result.fault is None and result.outcome.status in ("win", "draw")
    rec = read_record(tmp_path / "r.jsonl")
    assert verify_record(rec).ok and rec.result.names == ["fake0", "fake1", "fake2", "fake3"]
    assert all(bot.received[-1][1]["type"] == "game_over" for bot in bots.values())
    # Each request's id is the decision's number, across seats.
    ids = sorted(m["id"] for bot in bots.values() for _, m in bot.requests())
    assert ids == list(range(1, result.decisions + 1))


@pytest.mark.parametrize("others", [0.0, 0.1], ids=["others-prompt", "others-think"])
async def test_a_reply_just_within_the_limit_is_taken(autojump_clock, tmp_path, others):
    """Whether time passes between its turns or not, the deadline is where the
    limit is: a bot that always answers in 0.249 s of its 0.25 s plays the game."""
    scripts = {s: player(lambda n: others) for s in (1, 2, 3)}
    scripts[0] = player(lambda n: 0.249)
    result, _ = await play(scripts, LIMITS, record_path=tmp_path / "r.jsonl")
    assert result.fault is None, result.fault
    assert result_decisions(result, 0) > 100


@pytest.mark.parametrize("others", [0.0, 0.1], ids=["others-prompt", "others-think"])
async def test_a_reply_after_the_limit_but_before_the_deadline_fires_is_a_timeout(autojump_clock, tmp_path, others):
    """The runner's deadline lies up to DEADLINE_SLACK_S past the limit (it is
    moved lazily); a reply in that gap is read, and refused as late."""
    late = 0.25 + runner.DEADLINE_SLACK_S / 2
    scripts = {s: player(lambda n: others) for s in (1, 2, 3)}
    scripts[0] = player(slow_on(3, late))
    result, bots = await play(scripts, LIMITS, record_path=tmp_path / "r.jsonl")
    third = bots[0].requests()[2]
    assert_forfeit(result, 0, R.TIMEOUT, f"no reply to request {third[1]['id']} within 0.250s")
    assert result_decisions(result, 0) == 2  # the late answer was not taken
    assert bots[0].closed_at - third[0] == pytest.approx(late, abs=1e-9)  # ended by the reply, not the deadline


async def test_a_bot_that_does_not_answer_is_timed_out_at_the_limit_plus_the_slack(autojump_clock, tmp_path):
    result, bots = await play({0: player(slow_on(3, 100.0))}, LIMITS, record_path=tmp_path / "r.jsonl")
    third = bots[0].requests()[2]
    assert_forfeit(result, 0, R.TIMEOUT, "within 0.250s")
    assert bots[0].closed_at - third[0] == pytest.approx(0.25 + runner.DEADLINE_SLACK_S, abs=1e-9)


# -- the time bank --------------------------------------------------------------------------------


async def test_the_time_bank_pays_for_overruns_and_each_request_says_what_is_left(autojump_clock, tmp_path):
    limits = with_limits(time_bank_s=1.0)
    result, bots = await play({0: player(lambda n: 0.375 if n <= 4 else 0.0)}, limits, record_path=tmp_path / "r.jsonl")
    assert result.fault is None, result.fault
    time_ms = [m["time_ms"] for _, m in bots[0].requests()[:7]]
    # Each 0.375 s answer overran 0.25 s by 0.125 s, drawn from the bank; then it stays.
    assert time_ms == pytest.approx([1250, 1125, 1000, 875, 750, 750, 750], abs=1)
    others = [m["time_ms"] for s in (1, 2, 3) for _, m in bots[s].requests()]
    assert set(others) == {1250}  # every seat has its own bank
    hello = bots[0].received[0][1]
    assert hello["limits"] == {"handshake_ms": 2000, "decision_ms": 250, "time_bank_ms": 1000}


async def test_a_bot_whose_bank_runs_out_times_out_with_what_it_had_left(autojump_clock, tmp_path):
    limits = with_limits(time_bank_s=0.25)
    result, bots = await play({0: player(lambda n: 0.4)}, limits, record_path=tmp_path / "r.jsonl")
    # First answer: 0.4 s of 0.5 s, 0.15 s from the bank; second: 0.4 s of the 0.35 s left.
    assert [m["time_ms"] for _, m in bots[0].requests()] == pytest.approx([500, 350], abs=1)
    assert_forfeit(result, 0, R.TIMEOUT, "within 0.350s")
    assert result_decisions(result, 0) == 1


async def test_without_a_bank_any_overrun_is_a_timeout(autojump_clock, tmp_path):
    result, bots = await play({2: player(slow_on(1, 0.3))}, LIMITS, record_path=tmp_path / "r.jsonl")
    assert_forfeit(result, 2, R.TIMEOUT, "within 0.250s")
    assert result_decisions(result, 2) == 0


# -- the handshake ---------------------------------------------------------------------------------


async def test_a_bot_that_never_says_ready_fails_the_handshake_at_its_limit(autojump_clock, tmp_path):
    async def silent(bot: FakeBot) -> None:
        await bot.read()
        await trio.sleep_forever()

    result, bots = await play({2: silent}, LIMITS, record_path=tmp_path / "r.jsonl")
    assert_forfeit(result, 2, R.HANDSHAKE_TIMEOUT, "no ready within 2s")
    assert bots[2].closed_at - bots[2].received[0][0] == pytest.approx(2.0, abs=1e-9)
    assert not bots[0].requests()  # nobody was asked anything
    assert [m["type"] for _, m in bots[0].received] == ["hello", "game_over"]


async def test_a_ready_just_within_the_handshake_limit_is_taken(autojump_clock, tmp_path):
    async def slow_start(bot: FakeBot) -> int:
        await handshake(bot, after=1.999)
        return await player_after_handshake(bot)

    result, _ = await play({1: slow_start}, LIMITS, record_path=tmp_path / "r.jsonl")
    assert result.fault is None, result.fault


async def player_after_handshake(bot: FakeBot) -> int:
    while (msg := await bot.read())["type"] != "game_over":
        if msg["type"] == "request":
            bot.say(bot.answer(msg))
    return 0


@pytest.mark.parametrize("line,reason,message", [
    (b'{"type":"action","id":1,"action":"x"}\n', R.WRONG_MESSAGE, "expected ready, got action"),
    (b'{"type":"ready"}\n', R.WRONG_MESSAGE, "name"),
    (b"ready\n", R.INVALID_JSON, ""),
    (b'{"type":"ready","name":"a"}\n{"type":"ready","name":"b"}\n', R.UNEXPECTED_MESSAGE, "no request was pending"),
])
async def test_the_handshake_takes_one_ready_and_nothing_else(autojump_clock, tmp_path, line, reason, message):
    async def script(bot: FakeBot) -> None:
        await bot.read()
        bot.say(line)
        await trio.sleep_forever()

    result, _ = await play({3: script}, LIMITS, record_path=tmp_path / "r.jsonl")
    assert_forfeit(result, 3, reason, message)


# -- output when no request is pending ---------------------------------------------------------------


async def test_a_line_after_the_answer_in_the_same_write_is_caught_before_the_next_request(autojump_clock, tmp_path):
    extra = lambda n, req: action(req) + (b'{"type":"log"}\n' if n == 2 else b"")  # noqa: E731
    result, bots = await play({1: player(reply=extra)}, LIMITS, record_path=tmp_path / "r.jsonl")
    assert_forfeit(result, 1, R.UNEXPECTED_MESSAGE, "wrote output when no request was pending")
    assert result_decisions(result, 1) == 2  # the answer itself counted
    assert len(bots[1].requests()) == 2  # and no third request went out


@pytest.mark.parametrize("stray", [b'{"type":"log"}\n', b"{"], ids=["line", "part-of-a-line"])
async def test_output_written_later_between_requests_is_caught_before_the_next_request(autojump_clock, tmp_path,
                                                                                       stray):
    async def chatty(bot: FakeBot) -> None:
        await handshake(bot)
        request = await bot.read()
        bot.say(action(request))
        await trio.sleep(0.05)  # while the others think
        bot.say(stray)
        await trio.sleep_forever()

    scripts = {s: player(lambda n: 0.1) for s in range(4)}
    scripts[2] = chatty
    result, bots = await play(scripts, LIMITS, record_path=tmp_path / "r.jsonl")
    assert_forfeit(result, 2, R.UNEXPECTED_MESSAGE, "no request was pending")
    assert result_decisions(result, 2) == 1 and len(bots[2].requests()) == 1


# -- replies -----------------------------------------------------------------------------------------


@pytest.mark.parametrize("reply,reason,message", [
    (lambda req: action(req, id=req["id"] - 1), R.WRONG_REQUEST, "answered request {prev}, expected {id}"),
    (lambda req: action(req, id=req["id"] + 10**30), R.WRONG_REQUEST, "expected {id}"),
    (lambda req: action(req, choice="ZZ"), R.INVALID_ACTION, "'ZZ' is not an action of this game"),
    (lambda req: action(req, choice=next(c for c in ("2C", "3C", "pass") if c not in req["legal"])),
     R.ILLEGAL_ACTION, "is not among the"),
    (lambda req: b'{"type":"ready","name":"again"}\n', R.WRONG_MESSAGE, "expected action, got ready"),
    (lambda req: b'{"type":"action","id":%d,"action":"AS","x":1}\n' % req["id"], R.WRONG_MESSAGE, "x"),
    (lambda req: b"\xff\n", R.INVALID_UTF8, "not UTF-8"),
    (lambda req: b"x" * 5000 + b"\n", R.LINE_TOO_LONG, "longer than 4096 bytes"),
], ids=["previous-id", "huge-id", "invalid", "illegal", "ready", "unknown-field", "not-utf8", "too-long"])
async def test_a_wrong_reply_forfeits_with_its_reason(autojump_clock, tmp_path, reply, reason, message):
    seen = {}

    def answer(n, req):
        if n < 3:
            return action(req)
        seen.update(id=req["id"], prev=req["id"] - 1)
        return reply(req)

    result, _ = await play({1: player(reply=answer)}, with_limits(max_line_bytes=4096),
                           record_path=tmp_path / "r.jsonl")
    assert_forfeit(result, 1, reason, message.format(**seen))
    assert result_decisions(result, 1) == 2


async def test_a_reply_in_pieces_is_one_reply(autojump_clock, tmp_path):
    async def stutter(bot: FakeBot) -> int:
        await handshake(bot)
        while (msg := await bot.read())["type"] != "game_over":
            if msg["type"] == "request":
                line = bot.answer(msg)
                for i in range(0, len(line), 7):
                    bot.say(line[i:i + 7])
                    await trio.sleep(0.01)
        return 0

    result, _ = await play({0: stutter}, LIMITS, record_path=tmp_path / "r.jsonl")
    assert result.fault is None, result.fault


# -- the end of a bot's output ----------------------------------------------------------------------------


def half_then(end: str):
    async def script(bot: FakeBot) -> int | None:
        await handshake(bot)
        n = 0
        while True:
            msg = await bot.read()
            if msg["type"] != "request":
                continue
            n += 1
            if n < 3:
                bot.say(action(msg))
                continue
            line = action(msg)
            bot.say(line[:20])
            if end == "exit":
                return 4
            if end == "close":
                bot.close_stdout()
            await trio.sleep_forever()

    return script


@pytest.mark.parametrize("end,reason,message", [
    ("exit", R.PARTIAL_LINE, "a partial line without a newline arrived (20 bytes), then it exited with code 4"),
    ("close", R.PARTIAL_LINE,
     "a partial line without a newline arrived (20 bytes), then it closed its stdout but kept running"),
    ("hang", R.PARTIAL_LINE, "a partial line without a newline arrived (20 bytes); no newline followed within 0.250s"),
])
async def test_a_partial_line_at_the_end_of_the_output_is_named(autojump_clock, tmp_path, end, reason, message):
    result, _ = await play({3: half_then(end)}, LIMITS, record_path=tmp_path / "r.jsonl")
    assert_forfeit(result, 3, reason, message)
    assert result_decisions(result, 3) == 2


async def test_a_partial_ready_at_the_end_of_the_output_is_named(autojump_clock, tmp_path):
    async def script(bot: FakeBot) -> int:
        await bot.read()
        bot.say(b'{"type":"ready","name"')
        return 0

    result, _ = await play({1: script}, LIMITS, record_path=tmp_path / "r.jsonl")
    assert_forfeit(result, 1, R.PARTIAL_LINE, "(22 bytes), then it exited with code 0")


async def test_a_bot_that_exits_mid_game_is_named_exited(autojump_clock, tmp_path):
    result, _ = await play({0: player(reply=lambda n, req: None if n == 3 else action(req))}, LIMITS,
                           record_path=tmp_path / "r.jsonl")
    assert_forfeit(result, 0, R.EXITED, "exited with code 0")
    assert result_decisions(result, 0) == 2


async def test_a_bot_that_exits_after_answering_is_named_before_its_next_request(autojump_clock, tmp_path):
    async def answer_once_and_exit(bot: FakeBot) -> int:
        await handshake(bot)
        while (msg := await bot.read())["type"] != "request":
            pass
        bot.say(action(msg))
        return 9

    result, bots = await play({2: answer_once_and_exit}, LIMITS, record_path=tmp_path / "r.jsonl")
    assert_forfeit(result, 2, R.EXITED, "exited with code 9")
    assert len(bots[2].requests()) == 1 and result_decisions(result, 2) == 1


async def test_a_bot_that_stops_reading_is_named_not_reading(autojump_clock, tmp_path):
    async def deaf(bot: FakeBot) -> None:
        await handshake(bot)
        bot.stops_reading = True
        await trio.sleep_forever()

    result, _ = await play({1: deaf}, LIMITS, record_path=tmp_path / "r.jsonl")
    assert_forfeit(result, 1, R.NOT_READING, "stdin stayed full for 0.250s")


async def test_a_cap_named_by_the_channel_wins_over_the_partial_line_it_left(autojump_clock, tmp_path):
    """A bot killed for a cap (here set by hand, as the watchdog would) is named for the cap."""
    from referee.match.channel import BotFault

    async def hog(bot: FakeBot) -> int:
        await handshake(bot)
        await bot.read()
        bot.say(b'{"type":"act')
        bot.limit_fault = BotFault(R.MEMORY_LIMIT, "1025 MB resident in 1 processes (cap 1024 MB)")
        return -9

    result, _ = await play({0: hog}, LIMITS, record_path=tmp_path / "r.jsonl")
    assert_forfeit(result, 0, R.MEMORY_LIMIT, "cap 1024 MB")


# -- events ------------------------------------------------------------------------------------------


async def test_a_bot_that_asks_for_events_gets_them_before_its_request_and_one_that_does_not_gets_none(
    autojump_clock, tmp_path
):
    result, bots = await play({0: player(events=True), 1: player(lambda n: 0.01, events=True)}, LIMITS,
                              record_path=tmp_path / "r.jsonl")
    assert result.fault is None, result.fault
    for seat in (0, 1):
        kinds = [m["type"] for _, m in bots[seat].received]
        assert kinds[0] == "hello" and kinds[1] == "event" and kinds[-1] == "game_over"
        hands = [m["event"] for _, m in bots[seat].received if m["type"] == "event" and m["event"]["type"] == "hand"]
        assert hands and all(h["seat"] == seat for h in hands), "a bot saw another seat's hand"
    for seat in (2, 3):
        assert {m["type"] for _, m in bots[seat].received} == {"hello", "request", "game_over"}
    # What seat 0 was told is what the record says it may see, in the same order.
    rec = read_record(tmp_path / "r.jsonl")
    visible = [e.event for e in rec.entries if e.record == "event" and e.visible_to(0)]
    told = [m["event"] for _, m in bots[0].received if m["type"] == "event"]
    assert told == visible


async def test_the_public_entries_are_the_records_public_events_with_a_record_or_without(autojump_clock, tmp_path):
    """``MatchResult.entries`` (kept encoded during the game, dicts once read) are the
    public events the record holds, in order, whether a record is written or not."""
    path = tmp_path / "game.jsonl"
    recorded, _ = await play({}, LIMITS, seed=3, record_path=path)
    unrecorded, _ = await play({}, LIMITS, seed=3)
    public = [e.model_dump() for e in read_record(path).entries if e.record == "event" and e.to is None]
    assert len(public) > 100
    assert list(recorded.entries) == public == list(unrecorded.entries)
    assert len(recorded.entries) == len(public) and recorded.entries[-1] == public[-1]
    assert recorded.entries[1:3] == public[1:3] and recorded.entries == public


# -- each seat's decision times in the result ---------------------------------------------------------


async def test_the_result_carries_each_seats_decision_times_exactly(autojump_clock):
    """A seat's thinking is counted to that seat and no other (the real-process version, in
    test_runner.py, cannot bound the quick seats' times on a loaded machine)."""
    result, _ = await play({0: player(slow_on(2, 0.2, otherwise=0.0)), 1: player(lambda n: 0.01 * (n % 3))},
                           with_limits(decision_s=5.0))
    assert result.fault is None, result.fault
    assert sum(count for count, _, _ in result.decision_ms) == result.decisions
    count, total, longest = result.decision_ms[0]
    assert longest == pytest.approx(200, abs=0.01) and total == pytest.approx(200, abs=0.01)  # its one slow reply
    count1, total1, longest1 = result.decision_ms[1]
    assert longest1 == pytest.approx(20, abs=0.01)
    assert total1 == pytest.approx(10 * sum(n % 3 for n in range(1, count1 + 1)), abs=0.01)
    assert [m for _, _, m in result.decision_ms[2:]] == [0.0, 0.0]  # the prompt seats never waited
