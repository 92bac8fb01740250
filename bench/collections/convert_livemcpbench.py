"""LiveMCPBench's own judged requests, and the hand-written converter's text to compare with.

The tools are used as shipped (``bench/collections/livemcpbench/tools.json`` is the repo's
``tools/LiveMCPTool/tools.json``, read by ``rookhaven corpus add --tools``); only the
requests need converting. From a fetched mirror (a bare git dir):

    python3 bench/collections/convert_livemcpbench.py \\
        /work/.mirror/icip-cas+LiveMCPBench/repo bench/collections/livemcpbench

Writes ``requests.jsonl`` (each annotated task's Question, expecting every tool its
annotator listed) and ``plain.jsonl`` (the hand-written converter: a document a tool, its
name and description only, ids as ``corpus add --tools`` gives them).
"""

from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))

from rookhaven.toolcatalog import tool_records  # noqa: E402

NUMBERED = re.compile(r"^\s*\d+\.\s*(.+?)\s*$")


def main(mirror: str, out: str) -> None:
    target = Path(out)
    raw = subprocess.run(["git", "--git-dir", mirror, "show", "HEAD:annotated_data/"
                          "all_annotations.json"], capture_output=True, check=True).stdout
    lines = []
    for task in json.loads(raw):
        tools = task.get("Annotator Metadata", {}).get("Tools", "")
        expected = [m.group(1) for line in tools.splitlines() if (m := NUMBERED.match(line))]
        if task.get("Question") and expected:
            lines.append(json.dumps({"query": task["Question"], "expected": expected},
                                    ensure_ascii=False))
    (target / "requests.jsonl").write_text("\n".join(lines) + "\n", encoding="utf-8")
    records = tool_records(json.loads((target / "tools.json").read_text("utf-8")), "tools.json")
    plain = [json.dumps({"id": r["id"], "text": f"{r['metadata']['tool']['name']} "
                         f"{r['metadata']['tool'].get('description') or ''}"},
                        ensure_ascii=False) for r, _ in records]
    (target / "plain.jsonl").write_text("\n".join(plain) + "\n", encoding="utf-8")
    print(f"{len(lines)} requests, {len(plain)} tools")


if __name__ == "__main__":
    if len(sys.argv) != 3 or sys.argv[1] in ("-h", "--help"):
        print(__doc__)
        sys.exit(0 if len(sys.argv) > 1 and sys.argv[1] in ("-h", "--help") else 2)
    main(*sys.argv[1:])
