import sys, time, trio, tempfile, json
sys.path.insert(0, ".")
from pathlib import Path
from referee.logging import configure_logging
from referee.match.runner import run_match
from referee.match.record import read_record
from tests.match.hostile import CASES_BY_BOT, random_bot
configure_logging("info")
case = CASES_BY_BOT["fork_bomb"]
async def main():
    tmp = Path(tempfile.mkdtemp())
    seat = 2
    bots = [random_bot(100 + s) for s in range(4)]; bots[seat] = case.spec()
    t = time.monotonic()
    r = await run_match("back-alley", {}, bots, seed=7, record_path=tmp/"g.jsonl", limits=case.with_limits(), stderr_dir=tmp/"stderr")
    el = time.monotonic() - t
    rec = read_record(tmp/"g.jsonl")
    own = [e for e in rec.entries if e.record == "decision" and e.seat == seat]
    print("RESULT", round(el,2), r.fault and r.fault.message, "decisions", len(own), file=sys.stderr)
    print("STDERR", open(next((tmp/"stderr").glob("seat2*"))).read()[-600:], file=sys.stderr)
trio.run(main)
