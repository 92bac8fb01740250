"""Convert habenani-p/servicenow-mcp (a public ServiceNow MCP server) into a held-out
BEIR tool catalog.

Run from a fetched mirror (a bare git dir), e.g.:

    python3 bench/collections/convert_servicenow.py \
        /work/.mirror/habenani-p+servicenow-mcp/repo bench/collections/servicenow

Documents: every tool the server defines in src/tools/*.ts (the objects returned by the
get*ToolDefinitions() functions: name, description, inputSchema.properties).
Queries: the server's own EXAMPLES.md: each example's "**Use Case:**" / "**Scenario:**"
sentence, judged against every tool the example calls, and each "**Step N — ...:**"
label of a multi-step example, judged against the tool(s) called in that step.
"""

from __future__ import annotations

import json
import os
import re
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from _beirwrite import git_head, git_ls, git_show, write_collection

EXAMPLES = "EXAMPLES.md"
STRING = re.compile(r"'((?:[^'\\]|\\.)*)'|\"((?:[^\"\\]|\\.)*)\"|`((?:[^`\\]|\\.)*)`")
TOOL_START = re.compile(r"^      name: ['\"]([^'\"]+)['\"],\s*$", re.M)
PROP = re.compile(r"^          ['\"]?([A-Za-z_$][\w$]*)['\"]?\s*:")
TOOL_REF = re.compile(r"\"tool\"\s*:\s*\"([^\"]+)\"|callTool\(\s*['\"]([^'\"]+)['\"]")
SKIP_SECTIONS = ("Error Handling Examples", "Tips for Effective Usage", "Setup",
                 "Quick Reference")


def unescape(s: str) -> str:
    return re.sub(r"\\(.)", r"\1", s)


def tool_definitions(ts: str) -> list[dict]:
    """(name, description, parameter names) of each tool object in one TypeScript module."""
    out = []
    starts = [m for m in TOOL_START.finditer(ts)]
    for i, m in enumerate(starts):
        block = ts[m.end(): starts[i + 1].start() if i + 1 < len(starts) else len(ts)]
        d = re.search(r"^      description:(.*?)^      inputSchema:", block, re.M | re.S)
        if not d:
            continue  # not a tool definition object
        desc = "".join(unescape(next(g for g in s.groups() if g is not None))
                       for s in STRING.finditer(d.group(1)))
        params: list[str] = []
        p = re.search(r"^        properties:\s*\{(.*?)^        \}", block, re.M | re.S)
        if p:
            for line in p.group(1).splitlines():
                pm = PROP.match(line)
                if pm and pm.group(1) not in params:
                    params.append(pm.group(1))
        out.append({"name": m.group(1), "description": " ".join(desc.split()),
                    "params": params})
    return out


def example_requests(md: str) -> list[tuple[str, str, list[str]]]:
    """(id, request text, tools called) from EXAMPLES.md, in file order."""
    out = []
    section, heading, n_sec = "", "", 0
    units: list[tuple[str, str, list[str]]] = []  # current ### block: (kind, text, tools)
    loose: list[str] = []  # tools called in a block that has no Use Case / Step line

    def flush():
        ex = re.match(r"(Example|Workflow)\s+(\d+)\s*:\s*(.+)", heading)
        if not units and loose and ex:  # fall back on the example's own heading
            units.append(("use", ex.group(3).strip(), list(loose)))
        loose.clear()
        if not units:
            return
        base = (f"{ex.group(1)[0].lower()}{ex.group(2)}" if ex
                else f"sec{n_sec}")
        all_tools: list[str] = []
        for _, _, tools in units:
            all_tools += [t for t in tools if t not in all_tools]
        step = 0
        for kind, text, tools in units:
            if kind == "use":
                out.append((base, text, all_tools))
            else:
                step += 1
                out.append((f"{base}-s{step}", text, tools))
        units.clear()

    for line in md.splitlines():
        if line.startswith("## "):
            flush()
            section = line[3:].strip()
        elif line.startswith("### "):
            flush()
            heading, n_sec = line[4:].strip(), n_sec + 1
        elif any(section.startswith(s) for s in SKIP_SECTIONS):
            continue
        else:
            use = re.match(r"\*\*(Use Case|Scenario):\*\*\s*(.+)", line)
            step = re.match(r"\*\*Step\s+\d+\s*[—–-]\s*(.+?):?\*\*\s*$", line)
            if use:
                units.append(("use", use.group(2).strip(), []))
            elif step:
                units.append(("step", step.group(1).strip().rstrip(":"), []))
            else:
                for r in TOOL_REF.finditer(line):
                    name = r.group(1) or r.group(2)
                    if not units:
                        if name not in loose:
                            loose.append(name)
                        continue
                    for u in ([units[-1]] if units[-1][0] == "step" else units):
                        if name not in u[2]:
                            u[2].append(name)
    flush()
    return out


def main(git_dir: str, out_dir: str) -> None:
    ts_paths = sorted(p for p in git_ls(git_dir, "src/tools") if p.endswith(".ts"))
    docs, seen, dup = [], set(), []
    for path in ts_paths:
        for t in tool_definitions(git_show(git_dir, path)):
            if t["name"] in seen:
                dup.append(t["name"])
                continue
            seen.add(t["name"])
            doc = {"_id": t["name"], "title": t["name"], "text": t["description"]}
            if t["params"]:
                doc["fields"] = {"parameters": " ".join(t["params"])}
            docs.append(doc)

    queries, qrels, dropped_labels, no_label, dup_text = [], [], set(), [], 0
    texts = set()
    for qid, text, tools in example_requests(git_show(git_dir, EXAMPLES)):
        labels = [t for t in tools if t in seen]
        dropped_labels.update(t for t in tools if t not in seen)
        if not labels:
            no_label.append(qid)
            continue
        if text.lower() in texts:
            dup_text += 1
            continue
        texts.add(text.lower())
        queries.append({"_id": qid, "text": text})
        qrels.extend((qid, t) for t in labels)

    meta = {
        "name": "servicenow",
        "held_out": True,
        "source": {"repo": "habenani-p/servicenow-mcp", "commit": git_head(git_dir),
                   "paths": [*ts_paths, EXAMPLES, "LICENSE"]},
        "licence": "MIT",
        "notes": [
            "Held-out ServiceNow catalog: an MCP server for ServiceNow (TypeScript).",
            f"Corpus: every tool object (a 'name:' at the tool-object indentation followed "
            f"by 'description:' and 'inputSchema:') in src/tools/*.ts ({len(docs)} tools; "
            f"duplicate names skipped: {sorted(set(dup)) or 'none'}). _id = title = the tool "
            "name exactly as defined; text = the description (string literals concatenated, "
            "whitespace collapsed); parameters = the top-level keys of "
            "inputSchema.properties in source order.",
            "Queries: EXAMPLES.md, sections 'Error Handling Examples', 'Tips for Effective "
            "Usage', 'Setup' and 'Quick Reference' skipped. Each '**Use Case:**' or "
            "'**Scenario:**' sentence is a query judged against every tool the example "
            "calls (JSON '\"tool\": \"...\"' or JS callTool('...')); each '**Step N — "
            "label:**' is a query (label, trailing colon dropped) judged against the tool(s) "
            "called in that step. An example with neither (e.g. 'Example 28: Get Case "
            "Details') is a query with its heading's title ('Get Case Details') judged "
            "against the tools it calls. ids: 'e<N>' / 'w<N>' for Example/Workflow N, "
            "'-s<k>' for its k-th step.",
            f"Labels naming a tool absent from the code were dropped: "
            f"{sorted(dropped_labels) or 'none'}; requests left with no label dropped: "
            f"{no_label or 'none'}; {dup_text} repeated request texts (case-insensitive) "
            "dropped, first kept.",
            "Caveats: a small, author-written set (the examples document the server, so "
            "wording often echoes tool descriptions); step labels and headings are terse and some "
            "lean on their example's context ('Publish it', 'Get its relationships', 'Add each "
            "user'); kept as written. "
            "generic tools (query_records, natural_language_search, get_record) could "
            "answer many requests but only the tool the example calls is judged.",
        ],
    }
    print(json.dumps(write_collection(out_dir, docs, queries, qrels, meta), indent=1))


if __name__ == "__main__":
    if len(sys.argv) != 3:
        sys.exit(__doc__)
    main(sys.argv[1], sys.argv[2])
