#!/usr/bin/env python3
"""(table talk) Tells the other bots its hand through a kernel object two processes share, and
reads theirs the same way.  Plays legally (the first legal action) throughout.

Standard library only.  Usage: table_talk.py --channel NAME [--probe-at N] [--probes K]

The shared objects are files every bot can read: the Python standard library's
own files (the interpreter's installation, bound read-only into every sandbox).
Each seat has a *slot*: 55 files (one per card, jokers included), or for the
record-lock channels 55 bytes of one file.  On its first request the bot marks
the cards it holds in its own seat's slot and says on stderr::

    HOLD <seat> <card>,<card>,...

On its ``--probe-at``-th request (default 3) and the ``--probes`` after it
(default 4 in all) it looks at every other seat's slot and, whenever it has
learnt more, says::

    SEEN <seat> <card>,<card>,...

Channels (``--channel``):

* ``flock``: a shared ``flock`` on each held card's file; probed with a
  non-blocking exclusive ``flock`` (refused while another process holds one).
* ``posix``: a POSIX read lock (``F_SETLK``) on the card's byte; probed with ``F_GETLK``.
* ``ofd``: an open-file-description read lock (``F_OFD_SETLK``); probed with ``F_OFD_GETLK``.
* ``lease``: keeps each held card's file open; probed with a write lease
  (``F_SETLEASE``), which the kernel refuses while anyone else has the file open.
* ``inotify``: a thread reads each held card's file every 20 ms; the prober
  watches the other slots' files for ``IN_OPEN`` (set up on its first request).
* ``fanotify``: the same, watched with ``fanotify`` (needs CAP_SYS_ADMIN: root, unsandboxed).

A channel the kernel refuses is said once (``CHANNEL <name> refused: <error>``)
and the bot plays on.  tests/test_sandbox_channels.py runs it in pairs.
"""

import ctypes
import errno
import fcntl
import glob
import json
import os
import struct
import sys
import threading
import time

from _base import answer, option, say, write

RANKS, SUITS, JOKERS = "23456789TJQKA", "CDHS", ("BJ", "LJ", "JK")
CARDS = [r + s for s in SUITS for r in RANKS] + list(JOKERS)
SLOT = len(CARDS)
SEATS = 6  # slots for up to six seats
CHANNEL = option("--channel", "flock", str)
PROBE_AT = option("--probe-at", 3)
PROBES = option("--probes", 4)  # how many requests it probes on (a probe opens hundreds of files)

STDLIB = os.path.dirname(os.__file__)
# Files nothing else opens while a game runs (the standard library's own tests, where shipped).
FILES = sorted(glob.glob(os.path.join(STDLIB, "test", "**", "*.py"), recursive=True))
if len(FILES) < SLOT * SEATS:
    FILES = sorted(glob.glob(os.path.join(STDLIB, "**", "*.py"), recursive=True))
ONE_FILE = FILES[0]  # the byte-range channels use byte (seat * SLOT + card) of this file
FLOCK_STRUCT = "hh4xqqi4x"  # struct flock on x86_64 / aarch64: type, whence, start, len, pid
F_RDLCK, F_WRLCK, F_UNLCK = 0, 1, 2
F_GETLK, F_SETLK, F_OFD_GETLK, F_OFD_SETLK = 5, 6, 36, 37
F_SETLEASE = 1024
IN_OPEN, IN_NONBLOCK = 0x20, 0o4000
FAN_OPEN, FAN_MARK_ADD = 0x20, 1

libc = ctypes.CDLL(None, use_errno=True)
kept = []  # descriptors held for the whole game
seen = {}  # seat -> set of cards learnt
watch = {}  # inotify watch descriptor -> (seat, card)
watch_fd = None
refused = False


def path(seat, card):
    return FILES[seat * SLOT + CARDS.index(card)]


def refuse(exc):
    global refused
    if not refused:
        say(f"CHANNEL {CHANNEL} refused: {exc}")
    refused = True


def check(result):
    if result < 0:
        e = ctypes.get_errno()
        raise OSError(e, os.strerror(e))
    return result


def byte_lock(fd, cmd, kind, pos):
    data = fcntl.fcntl(fd, cmd, struct.pack(FLOCK_STRUCT, kind, os.SEEK_SET, pos, 1, 0))
    return struct.unpack(FLOCK_STRUCT, data)[0]


def shared_fd():
    if not kept:
        kept.append(os.open(ONE_FILE, os.O_RDONLY))  # one descriptor: closing another would drop POSIX locks
    return kept[0]


def touch_forever(paths):
    while True:
        for p in paths:
            try:
                with open(p, "rb") as f:
                    f.read(1)
            except OSError:
                pass
        time.sleep(0.02)


def signal_hand(seat, hand):
    try:
        if CHANNEL == "flock":
            for card in hand:
                fd = os.open(path(seat, card), os.O_RDONLY)
                kept.append(fd)
                fcntl.flock(fd, fcntl.LOCK_SH)
        elif CHANNEL in ("posix", "ofd"):
            fd = shared_fd()
            for card in hand:
                byte_lock(fd, F_SETLK if CHANNEL == "posix" else F_OFD_SETLK, F_RDLCK, seat * SLOT + CARDS.index(card))
        elif CHANNEL == "lease":
            kept.extend(os.open(path(seat, card), os.O_RDONLY) for card in hand)
        elif CHANNEL in ("inotify", "fanotify"):
            threading.Thread(target=touch_forever, args=([path(seat, c) for c in hand],), daemon=True).start()
    except OSError as exc:
        refuse(exc)
    say(f"HOLD {seat} {','.join(sorted(hand))}")


def start_watching(seat):
    """inotify / fanotify: watch every other seat's files from the first request on."""
    global watch_fd
    try:
        if CHANNEL == "inotify":
            watch_fd = check(libc.inotify_init1(IN_NONBLOCK))
        else:
            watch_fd = check(libc.fanotify_init(0x2, os.O_RDONLY))  # FAN_NONBLOCK, notification class
        for other in range(SEATS):
            if other == seat:
                continue
            for card in CARDS:
                p = path(other, card).encode()
                if CHANNEL == "inotify":
                    watch[check(libc.inotify_add_watch(watch_fd, p, IN_OPEN))] = (other, card)
                else:
                    check(libc.fanotify_mark(watch_fd, FAN_MARK_ADD, ctypes.c_uint64(FAN_OPEN), -100, p))
    except OSError as exc:
        refuse(exc)
        watch_fd = None


def read_watches():
    by_path = {path(s, c): (s, c) for s in range(SEATS) for c in CARDS}
    while watch_fd is not None:
        try:
            data = os.read(watch_fd, 65536)
        except BlockingIOError:
            return
        i = 0
        while i < len(data):
            if CHANNEL == "inotify":
                wd, _mask, _cookie, size = struct.unpack_from("iIII", data, i)
                if wd in watch:
                    s, c = watch[wd]
                    seen.setdefault(s, set()).add(c)
                i += 16 + size
            else:
                length, _v, _r, _m, _mask, fd, _pid = struct.unpack_from("IBBHQii", data, i)
                if fd >= 0:
                    try:
                        hit = by_path.get(os.readlink(f"/proc/self/fd/{fd}"))
                    finally:
                        os.close(fd)
                    if hit is not None:
                        seen.setdefault(hit[0], set()).add(hit[1])
                i += length


def probe(seat):
    """Learn what the other seats hold; say what is new."""
    before = {s: set(c) for s, c in seen.items()}
    if CHANNEL in ("inotify", "fanotify"):
        if watch_fd is not None:
            time.sleep(0.1)  # the others read their files every 20 ms
        read_watches()
    elif not refused:
        for other in range(SEATS):
            if other == seat:
                continue
            for card in CARDS:
                try:
                    if held_elsewhere(other, card):
                        seen.setdefault(other, set()).add(card)
                except OSError as exc:
                    refuse(exc)
                    return
    for s, cards in sorted(seen.items()):
        if cards != before.get(s):
            say(f"SEEN {s} {','.join(sorted(cards))}")


def held_elsewhere(other, card):
    if CHANNEL == "flock":
        fd = os.open(path(other, card), os.O_RDONLY)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            fcntl.flock(fd, fcntl.LOCK_UN)
            return False
        except BlockingIOError:
            return True
        finally:
            os.close(fd)
    if CHANNEL in ("posix", "ofd"):
        cmd = F_GETLK if CHANNEL == "posix" else F_OFD_GETLK
        return byte_lock(shared_fd(), cmd, F_WRLCK, other * SLOT + CARDS.index(card)) != F_UNLCK
    if CHANNEL == "lease":
        fd = os.open(path(other, card), os.O_RDONLY)
        try:
            fcntl.fcntl(fd, F_SETLEASE, F_WRLCK)
            fcntl.fcntl(fd, F_SETLEASE, F_UNLCK)
            return False
        except OSError as exc:
            if exc.errno in (errno.EAGAIN, errno.EBUSY):
                return True  # someone else has it open
            raise
        finally:
            os.close(fd)
    return False


def main():
    requests = 0
    for line in sys.stdin:
        msg = json.loads(line)
        kind = msg.get("type")
        if kind == "hello":
            write(json.dumps({"type": "ready", "name": f"table_talk_{CHANNEL}", "events": False}).encode() + b"\n")
        elif kind == "request":
            requests += 1
            seat = msg["seat"]
            if requests == 1:
                signal_hand(seat, msg["state"]["hand"])
                if CHANNEL in ("inotify", "fanotify"):
                    start_watching(seat)
            if PROBE_AT <= requests < PROBE_AT + PROBES:
                probe(seat)
            write(answer(msg))
        elif kind == "game_over":
            return 0
    return 0


if __name__ == "__main__":
    sys.exit(main())
