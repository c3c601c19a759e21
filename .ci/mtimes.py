#!/usr/bin/env python3
"""Modification times of the tracked files, kept between CI runs that share a target directory.

A fresh clone gives every file the time of the clone, and cargo rebuilds what it takes for edited
files. `record MANIFEST` writes, for each tracked file, its blob id (git's hash of the content)
and its modification time; `restore MANIFEST` gives every tracked file whose content is the one
recorded the time recorded with it. A changed file keeps the time of the clone, newer than any
artefact in the cache, so cargo rebuilds what depends on it; an unchanged file gets the time it
had in the last run, older than the artefacts that run built from it.

Only the last run's contents are recorded, and CI holds a lock on the target directory for the
whole run, so an artefact newer than a restored time was built from that same content.
"""

import os
import subprocess
import sys


def tracked():
    """(path, blob id) of every tracked file, or None when the working tree differs from the
    index (then the blob ids do not describe the files)."""
    dirty = subprocess.run(
        ["git", "status", "--porcelain", "--untracked-files=no"], capture_output=True, text=True, check=True
    ).stdout
    if dirty.strip():
        return None
    out = subprocess.run(["git", "ls-files", "-s", "-z"], capture_output=True, check=True).stdout
    files = []
    for entry in out.split(b"\0"):
        if not entry:
            continue
        meta, path = entry.split(b"\t", 1)
        files.append((path.decode(), meta.split()[1].decode()))
    return files


def main():
    if len(sys.argv) != 3 or sys.argv[1] not in ("record", "restore"):
        sys.exit("usage: mtimes.py record|restore MANIFEST")
    command, manifest = sys.argv[1:]
    files = tracked()
    if files is None:
        print("mtimes: the working tree has changes; times neither recorded nor restored")
        if command == "record" and os.path.exists(manifest):
            os.remove(manifest)
        return
    if command == "record":
        with open(manifest + ".tmp", "w") as f:
            for path, blob in files:
                if os.path.isfile(path) and not os.path.islink(path):
                    f.write(f"{blob}\t{os.stat(path).st_mtime_ns}\t{path}\n")
        os.replace(manifest + ".tmp", manifest)
        return
    recorded = {}
    with open(manifest) as f:
        for line in f:
            blob, ns, path = line.rstrip("\n").split("\t", 2)
            recorded[path] = (blob, int(ns))
    restored = 0
    for path, blob in files:
        if recorded.get(path, (None,))[0] == blob and os.path.isfile(path) and not os.path.islink(path):
            ns = recorded[path][1]
            os.utime(path, ns=(ns, ns))
            restored += 1
    print(f"mtimes: {restored} of {len(files)} tracked files unchanged since the last run, their times restored")


if __name__ == "__main__":
    main()
