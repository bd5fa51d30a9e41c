import sys, trio, re
from pathlib import Path
from referee.match import bubblewrap
from referee.match.runner import run_match
from referee.match.types import BotSpec, Limits
ROOT = Path.cwd()
TALK = ROOT/"sample_bots/misbehaving/table_talk.py"
RANDOM = ROOT/"sample_bots/random_bot.py"
def talk(ch): return BotSpec(name="talk", command=(sys.executable, str(TALK), "--channel", ch))
def rnd(s): return BotSpec(name="random", command=(sys.executable, str(RANDOM), str(s)))
async def main(ch, mode, tmp):
    bots=[talk(ch), rnd(1), talk(ch), rnd(3)]
    r = await run_match("back-alley", {}, bots, seed=7, limits=Limits(sandbox=mode), stderr_dir=Path(tmp))
    print(mode, ch, r.outcome.status, r.fault and r.fault.message)
    for f in sorted(Path(tmp).glob("seat*-talk.log")):
        lines=[l.split(": ",1)[1] for l in f.read_text().splitlines() if l.startswith("table_talk")]
        print(f.name, [l[:90] for l in lines][-4:])
ch, mode, today = sys.argv[1], sys.argv[2], len(sys.argv)>3
if today:
    bubblewrap.view_problem = lambda: "today"; bubblewrap.seccomp_problem = lambda: "today"
import tempfile
trio.run(main, ch, mode, tempfile.mkdtemp())
