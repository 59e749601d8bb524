#!/usr/bin/python3
"""docs/config.md's key tables as a C table (build/config_schema.h): the one list of the
configuration's sections and keys, with type, default and meaning. `cdlab help config` prints
it, and the config reader refuses to read a key that is not in it (a key added to the code but
not to docs/config.md fails every run that reads it, in the tests first), so the documentation
and the parser cannot drift apart.

    tools/config_schema.py docs/config.md > build/config_schema.h

Tables read: those whose header starts `| key |` under a `## [section]` heading, and the walls'
table (`| section | key |`). A key cell may hold several keys (`\\`a\\`, \\`b\\``) and a
condition before them (`chain: \\`radius\\``)."""
import re
import sys

WALLS = {"plane": ["plane."], "piston": ["piston."], "cylinder": ["cylinder."],
         "all": ["plane.", "piston.", "cylinder."]}


def cells(line, n=None):
    """The cells of a table row; with n, cells past the n-th are rejoined into the last (a `|x|`
    inside a meaning splits it)."""
    raw = line.strip().strip("|").split("|")
    if n and len(raw) > n:
        raw = raw[:n - 1] + ["|".join(raw[n - 1:])]
    return [x.strip() for x in raw]


def link(m):
    """[text](target) as the terminal reads it: text (docs/target), a section of this page as
    text (docs/config.md#anchor); a link whose text is its target, once."""
    text, target = m.group(1), m.group(2)
    where = "docs/config.md" + target if target.startswith("#") else \
        target if "/" in target or "://" in target else "docs/" + target
    return where if text in (target, where) else f"{text} ({where})"


def plain(text):
    """Markdown cell to plain text: no backticks, no bold, links as text (docs/page)."""
    text = re.sub(r"\[([^\]]+)\]\(([^)\s]+)\)", link, text)
    return text.replace("`", "").replace("**", "").strip()


def parse(md):
    rows, section, header = [], None, None
    for line in md.split("\n"):
        m = re.match(r"^## \[([a-z_]+)\]", line)
        if m:
            section, header = m.group(1), None
            continue
        if line.startswith("## "):
            section = "walls" if line.startswith("## Walls") else None
            header = None
            continue
        if not line.startswith("|"):
            header = None
            continue
        c = cells(line, len(header) if header else None)
        if header is None:
            header = c
            continue
        if set(line.replace("|", "").strip()) <= set("-: "):
            continue
        if section is None:
            continue
        if header[:2] == ["key", "type"] and section != "walls":
            keycell, typ, dflt, meaning = c[0], c[1], c[2], c[3]
            secs = [section]
        elif header[:2] == ["section", "key"] and section == "walls":
            keycell, typ, dflt, meaning = c[1], "", c[2], c[3]
            secs = []
            for s in c[0].split(","):
                secs += WALLS[s.strip()]
        else:
            continue
        cond = keycell.split(":", 1)[0].strip() + ": " if ":" in keycell.split("`", 1)[0] else ""
        for key in re.findall(r"`([a-z_][a-z_0-9]*)`", keycell):
            for s in secs:
                rows.append((s, key, plain(typ), plain(dflt), plain(cond + meaning)))
    return rows


def c_string(s):
    return '"' + s.replace("\\", "\\\\").replace('"', '\\"') + '"'


def main():
    md = open(sys.argv[1], encoding="utf-8").read()
    rows = parse(md)
    if len(rows) < 40:
        sys.exit(f"config_schema.py: only {len(rows)} keys found in {sys.argv[1]}: the tables changed?")
    out = ["/* Generated from docs/config.md by tools/config_schema.py: do not edit. */",
           "#ifndef CDLAB_CONFIG_SCHEMA_H", "#define CDLAB_CONFIG_SCHEMA_H", "",
           "#include \"config.h\"", "",
           "static const config_key_doc config_schema[] = {"]
    for r in rows:
        out.append("    {" + ", ".join(c_string(x) for x in r) + "},")
    out += ["};", f"#define CONFIG_SCHEMA_N {len(rows)}", "", "#endif", ""]
    sys.stdout.write("\n".join(out))


if __name__ == "__main__":
    main()
