"""Writes crates/relis-server/src/cmd/planned.rs from a redis-server 7.0.15's COMMAND INFO/DOCS.

Run once (redis-server --port 7815 --save '' --appendonly no, then
`python3 tools/gen_planned.py 7815 > crates/relis-server/src/cmd/planned.rs`); when a family
lands, its specs move to the family's own table and leave this file by hand.
"""

import sys

import resp3

FAMILIES = ["x", "bit", "getbit", "setbit", "pf", "geo", "dump", "restore", "migrate"]


def planned(name):
    return any(name.startswith(p) for p in FAMILIES) and name not in ("exec",)


def strs(v):
    return "&[" + ", ".join('"%s"' % s for s in v) + "]"


def spec(info, docs, indent):
    name, arity, flags, first, last, step, acl = info[:7]
    subs = info[9]
    pad = " " * indent
    out = [pad + "Spec {"]
    out.append(pad + '    name: "%s",' % name)
    out.append(pad + "    arity: %d," % arity)
    out.append(pad + "    flags: %s," % strs(flags))
    out.append(pad + "    acl: %s," % strs(a[1:] for a in acl))
    if first:
        out.append(pad + "    keys: (%d, %d, %d)," % (first, last, step))
    out.append(pad + '    group: "%s",' % docs["group"])
    out.append(pad + '    since: "%s",' % docs["since"])
    out.append(pad + '    summary: "%s",' % docs["summary"].replace('"', '\\"'))
    if subs:
        subdocs = dict(docs["subcommands"])
        out.append(pad + "    subcommands: &[")
        for s in sorted(subs, key=lambda s: s[0]):
            out.extend(spec(s, dict(subdocs[s[0]]), indent + 8))
        out.append(pad + "    ],")
    out.append(pad + "    ..Spec::BASE")
    out.append(pad + "},")
    return out


def main():
    c = resp3.Conn(int(sys.argv[1]))
    names = sorted(n for n in c.call("COMMAND", "LIST") if "|" not in n and planned(n))
    print("//! Redis 7.0 commands Relis has not implemented yet (streams, bitmaps, HyperLogLog, geo,")
    print("//! DUMP/RESTORE/MIGRATE): known to ACL rules only, so that a rule naming one is accepted,")
    print("//! shown back and applied when the command lands. Not dispatched, not in COMMAND.")
    print("//! Generated once by tools/gen_planned.py from redis-server 7.0.15; when a family")
    print("//! lands, its specs move to the family's own table.")
    print()
    print("use crate::cmd::Spec;")
    print()
    print("/// The planned commands, each with its subcommands, in name order.")
    print("pub static SPECS: &[Spec] = &[")
    for n in names:
        [info] = c.call("COMMAND", "INFO", n)
        [(_, docs)] = c.call("COMMAND", "DOCS", n)
        print("\n".join(spec(info, dict(docs), 4)))
    print("];")


main()
