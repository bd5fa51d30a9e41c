"""protocol.bot: a bot is a function from a request to an action."""

from __future__ import annotations

import io
import json

from protocol.bot import Request, run

from .test_languages import EVENT, GAME_OVER, HELLO

REQUEST = {"type": "request", "id": 7, "seat": 0, "decision": "bid", "state": {"h": 13},
           "legal": ["pass", "1", "board"], "time_ms": 1000}


def play(decide, *lines, **hooks):
    out = io.StringIO()
    code = run(decide, stdin=io.StringIO("".join(json.dumps(m) + "\n" for m in lines)), stdout=out,
               **hooks)
    return code, [json.loads(x) for x in out.getvalue().splitlines()]


def test_hello_gets_ready_with_the_name_and_no_events_without_an_event_hook():
    code, sent = play(lambda r: r.legal[0], HELLO, GAME_OVER, name="mine", games=1)
    assert code == 0
    assert sent == [{"type": "ready", "name": "mine", "events": False}]  # version 1's ready, word for word


def test_each_request_is_answered_with_decide_and_the_request_id():
    seen: list[Request] = []

    def decide(request: Request) -> str:
        seen.append(request)
        return request.legal[-1]

    _, sent = play(decide, HELLO, REQUEST, GAME_OVER)
    assert sent[1] == {"type": "action", "id": 7, "action": "board"}
    (request,) = seen
    assert (request.seat, request.decision, request.state, request.time_ms) == (0, "bid", {"h": 13}, 1000)
    assert request.game == "back-alley" and request.hello["teams"] == [[0, 2], [1, 3]]


def test_an_event_hook_asks_for_events_and_receives_each_inner_event():
    events, hellos, overs = [], [], []
    _, sent = play(lambda r: r.legal[0], HELLO, EVENT, REQUEST, GAME_OVER,
                   on_event=events.append, on_hello=hellos.append, on_game_over=overs.append)
    assert sent[0]["events"] is True
    assert events == [EVENT["event"]]
    assert hellos == [HELLO] and overs == [GAME_OVER]


def test_with_one_game_the_helper_stops_at_game_over_and_reads_no_further():
    _, sent = play(lambda r: r.legal[0], HELLO, GAME_OVER, REQUEST, games=1)
    assert [m["type"] for m in sent] == ["ready"]


def test_by_default_the_helper_plays_many_games_until_its_input_ends():
    hellos: list[dict] = []
    second = {**HELLO, "seat": 1, "table": 1}
    code, sent = play(lambda r: r.legal[0], HELLO, REQUEST, GAME_OVER, second, {**REQUEST, "id": 9},
                      GAME_OVER, on_hello=hellos.append)
    assert code == 0 and hellos == [HELLO, second]
    assert sent == [{"type": "ready", "name": "bot", "events": False, "games": "many"},
                    {"type": "action", "id": 7, "action": "pass"},
                    {"type": "ready", "name": "bot", "events": False, "games": "many"},
                    {"type": "action", "id": 9, "action": "pass"}]


def test_a_bot_with_a_game_budget_says_bye_to_the_hello_after_its_last_game():
    _, sent = play(lambda r: r.legal[0], HELLO, GAME_OVER, HELLO, GAME_OVER, HELLO, games=2)
    assert [m["type"] for m in sent] == ["ready", "ready", "bye"] and sent[0]["games"] == 2


def test_a_multi_table_bot_tags_every_line_and_keeps_each_tables_hello_apart():
    seen: list[tuple[int, int]] = []
    overs: list[int] = []

    def decide(request: Request) -> str:
        seen.append((request.table, request.hello["seat"]))
        return request.legal[0]

    _, sent = play(decide, {**HELLO, "table": 0}, {**HELLO, "seat": 3, "table": 5},
                   {**REQUEST, "table": 5, "id": 2}, {**REQUEST, "table": 0, "id": 3},
                   {**GAME_OVER, "table": 0}, tables=8, on_game_over=lambda m, t: overs.append(t))
    assert sent == [{"type": "ready", "name": "bot", "events": False, "games": "many", "tables": 8, "table": 0},
                    {"type": "ready", "name": "bot", "events": False, "games": "many", "tables": 8, "table": 5},
                    {"type": "action", "id": 2, "action": "pass", "table": 5},
                    {"type": "action", "id": 3, "action": "pass", "table": 0}]
    assert seen == [(5, 3), (0, 0)] and overs == [0]


def test_a_multi_table_bots_actions_take_the_referees_fast_route():
    """The referee routes ``{"type":"action","table":N,...`` by its prefix, without decoding it."""
    from referee.match.pool import _TAGGED_ACTION

    out = io.StringIO()
    lines = [{**HELLO, "table": 4}, {**REQUEST, "table": 4, "id": 2}]
    run(lambda r: r.legal[0], stdin=io.StringIO("".join(json.dumps(m) + "\n" for m in lines)), stdout=out, tables=8)
    action = out.getvalue().splitlines()[1].encode()
    assert (m := _TAGGED_ACTION.match(action)) is not None and m[1] == b"4"


def test_an_illegal_answer_is_sent_as_given_with_a_warning_on_stderr(capsys):
    _, sent = play(lambda r: "7", HELLO, REQUEST, GAME_OVER, name="oops")
    assert sent[1]["action"] == "7"
    assert "oops: decide() returned '7'" in capsys.readouterr().err


def test_end_of_input_without_game_over_ends_the_bot_normally():
    code, sent = play(lambda r: r.legal[0], HELLO, REQUEST)
    assert code == 0 and len(sent) == 2
