//! Streams over TCP: every command against redis-server 7.0 (the same lines, byte-for-byte
//! replies, RESP2 and RESP3), XREAD BLOCK served and timed out, the type everywhere else, and
//! the data after a restart.

mod common;

use common::*;
use resp::Frame;

/// Differential scripts: each line runs on a fresh redis-server and a fresh Relis, in order.
/// `~ ` compares only the reply's first byte (ids from the clock); `@N ` runs on connection N.
const SCRIPTS: &[(&str, &[&str])] = &[
    ("xadd", XADD),
    ("xrange", XRANGE),
    ("xdel_xlen", XDEL),
    ("xtrim", XTRIM),
    ("xtrim_approx", XTRIM_APPROX),
    ("xsetid", XSETID),
    ("xread", XREAD),
    ("groups", GROUPS),
    ("claim", CLAIM),
    ("xinfo", XINFO),
    ("types", TYPES),
    ("info", INFO),
];

const XADD: &[&str] = &[
    "XADD s 0-0 f v",
    "EXISTS s",
    "XADD s 1-1 f v",
    "XADD s 1-1 f v",
    "XADD s 1-* f v",
    "XADD s 0-* f v",
    "XADD s 5-* a 1 b 2",
    "XADD s 5 a 1",
    "XADD s 6 a 1",
    "XADD s abc f v",
    "XADD s -* f v",
    "XADD s 1-2-3 f v",
    "XADD s 7-x f v",
    "XADD s 18446744073709551616 f v",
    "XADD s 7-1 f",
    "XADD s 7-1 f v g",
    "XADD s NOMKSTREAM MAXLEN = -1 * f v",
    "XADD s MAXLEN = 1 LIMIT 10 * f v",
    "XADD s MAXLEN ~ 1 LIMIT -1 * f v",
    "XADD s MAXLEN ~ 1 LIMIT x * f v",
    "XADD s MAXLEN x * f v",
    "XADD s MAXLEN 1 MINID 1 * f v",
    "XADD s MINID 1 MAXLEN 1 * f v",
    "XADD s LIMIT 5 * f v",
    "XADD s LIMIT 5 LIMIT 5",
    "XADD s LIMIT 0 8-0 f v",
    "XADD s MINID abc 9-0 f v",
    "XADD s MINID - 9-0 f v",
    "XADD nos NOMKSTREAM * f v",
    "XADD nos nomkstream MAXLEN 0 10-0 f v",
    "EXISTS nos",
    "XADD s MAXLEN = 3 20-0 f v",
    "XLEN s",
    "XRANGE s - +",
    "XADD s MINID 20 21-0 f v",
    "XRANGE s - +",
    "XADD s maxlen 0 22-0 f v",
    "XLEN s",
    "EXISTS s",
    "XRANGE s - +",
    "XADD s 18446744073709551615-18446744073709551615 f v",
    "XADD s * f v",
    "XADD s 18446744073709551615-* f v",
    "XADD m 18446744073709551615-18446744073709551614 f v",
    "XADD m 18446744073709551615-* f v",
    "XADD m 18446744073709551615-* f v",
    "XADD bin 1-1 \"\\x00\\xff\" \"\" \"\" \"\\r\\n\"",
    "XRANGE bin - +",
    "SET str x",
    "XADD str * f v",
    "XADD str NOMKSTREAM * f v",
    "~ XADD auto * f v",
    "XLEN auto",
    "~ XADD auto * f v",
    "XLEN auto",
    "XADD",
    "XADD s",
    "XADD s *",
];

const XRANGE: &[&str] = &[
    "XADD s 1-1 a 1",
    "XADD s 1-2 b 2",
    "XADD s 2-0 c 3",
    "XADD s 3-5 d 4 e 5",
    "XADD s 18446744073709551615-0 z 1",
    "XRANGE s - +",
    "XREVRANGE s + -",
    "XRANGE s 1 1",
    "XRANGE s 1-2 +",
    "XRANGE s (1-1 (3-5",
    "XREVRANGE s (3-5 (1-1",
    "XRANGE s (1 +",
    "XRANGE s - (2",
    "XRANGE s 3 +",
    "XRANGE s 18446744073709551615 +",
    "XRANGE s - + COUNT 2",
    "XREVRANGE s + - COUNT 2",
    "XRANGE s - + COUNT 0",
    "XRANGE s - + COUNT -1",
    "XRANGE s - + COUNT 9223372036854775807",
    "XREVRANGE s + - COUNT 9223372036854775807",
    "XRANGE s 000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000001 +",
    "XRANGE s 0000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000001 +",
    "XRANGE s - + count 1 count 3",
    "XRANGE s - + COUNT",
    "XRANGE s - + COUNT x",
    "XRANGE s - + foo 1",
    "XRANGE s 3 1",
    "XRANGE s (- +",
    "XRANGE s - (+",
    "XRANGE s ( +",
    "XRANGE s (18446744073709551615-18446744073709551615 +",
    "XRANGE s - (0-0",
    "XREVRANGE s (0-0 -",
    "XRANGE s x +",
    "XRANGE s - x",
    "XRANGE s 1-x +",
    "XRANGE nokey - +",
    "XRANGE nokey - + COUNT 0",
    "XREVRANGE nokey + -",
    "SET str x",
    "XRANGE str - +",
    "XREVRANGE str + -",
    "XRANGE",
    "XRANGE s -",
];

const XDEL: &[&str] = &[
    "XADD s 1-1 a 1",
    "XADD s 2-1 b 2",
    "XADD s 3-1 c 3",
    "XDEL nokey abc",
    "XDEL s abc",
    "XDEL s 1-1 abc",
    "XLEN s",
    "XDEL s 3",
    "XDEL s 3-1 3-1 1-1",
    "XLEN s",
    "XRANGE s - +",
    "XDEL s 2-1",
    "XLEN s",
    "EXISTS s",
    "TYPE s",
    "XRANGE s - +",
    "XADD s 3-1 x y",
    "XADD s 3-2 x y",
    "XLEN nokey",
    "SET str x",
    "XLEN str",
    "XDEL str 1-1",
    "XLEN",
    "XLEN a b",
    "XDEL s",
];

const XTRIM: &[&str] = &[
    "XTRIM nokey MAXLEN 0",
    "XTRIM nokey MAXLEN x",
    "SET str x",
    "XTRIM str MAXLEN 0",
    "XADD s 1-0 f v",
    "XADD s 2-0 f v",
    "XADD s 3-0 f v",
    "XADD s 4-0 f v",
    "XADD s 5-0 f v",
    "XTRIM s MAXLEN 1 foo",
    "XTRIM s foo",
    "XTRIM s LIMIT 1",
    "XTRIM s LIMIT 0 MAXLEN 4",
    "XTRIM s MAXLEN = 4 LIMIT 1",
    "XTRIM s MAXLEN -1",
    "XTRIM s MINID abc",
    "XTRIM s MINID -",
    "XTRIM s MAXLEN 1 MINID 1",
    "XTRIM s MAXLEN ~ 1",
    "XTRIM s MAXLEN ~ 1 LIMIT 1000",
    "XTRIM s MAXLEN = 4",
    "XRANGE s - +",
    "XTRIM s MINID = 3",
    "XRANGE s - +",
    "XTRIM s MINID 4-0",
    "XTRIM s MINID 4-1",
    "XTRIM s maxlen 0",
    "XLEN s",
    "EXISTS s",
    "XTRIM s MAXLEN",
    "XTRIM s MAXLEN ~",
    "XTRIM s MAXLEN =",
    "XTRIM s MAXLEN ~ =",
];

/// `~` on streams that only grew by XADD: Redis trims whole nodes of 100 entries, as Relis
/// trims runs of 100.
const XTRIM_APPROX: &[&str] = &[
    "EVAL \"for i = 1, 1250 do redis.call('XADD', KEYS[1], i .. '-0', 'f', 'v') end\" 1 s",
    "XTRIM s MAXLEN ~ 1200",
    "XTRIM s MAXLEN ~ 1149",
    "XLEN s",
    "XTRIM s MAXLEN ~ 120 LIMIT 250",
    "XLEN s",
    "XTRIM s MAXLEN ~ 0 LIMIT 99",
    "XTRIM s MINID ~ 560",
    "XRANGE s - + COUNT 1",
    "XTRIM s MINID ~ 601",
    "XRANGE s - + COUNT 1",
    "XTRIM s MINID ~ 1000 LIMIT 0",
    "XLEN s",
    "XTRIM s MAXLEN ~ 10",
    "XLEN s",
    "XADD s MAXLEN ~ 0 2000-0 f v",
    "XLEN s",
    "XADD s MAXLEN ~ 0 2001-0 f v",
    "XLEN s",
    "EVAL \"for i = 1, 350 do redis.call('XADD', KEYS[1], i .. '-0', 'f', 'v') end\" 1 t",
    "XADD t MAXLEN ~ 100 LIMIT 100 400-0 f v",
    "XLEN t",
    "XADD t MINID ~ 300 401-0 f v",
    "XLEN t",
    "XRANGE t - + COUNT 1",
];

const XSETID: &[&str] = &[
    "XSETID nokey 1-1",
    "XSETID nokey x",
    "XADD s 1-1 f v",
    "XADD s 2-1 f v",
    "XSETID s 1-1",
    "XSETID s 2-0",
    "XSETID s 2-1",
    "XADD s 2-1 f v",
    "XSETID s 5-0",
    "XADD s 5-0 f v",
    "XADD s 5-* f v",
    "XSETID s 6",
    "XSETID s 7-0 ENTRIESADDED 1",
    "XSETID s 7-0 ENTRIESADDED -1",
    "XSETID s 7-0 ENTRIESADDED x",
    "XSETID s 7-0 MAXDELETEDID 8-0",
    "XSETID s 7-0 MAXDELETEDID x",
    "XSETID s 7-0 MAXDELETEDID 3-0 ENTRIESADDED 10",
    "XSETID s 7-0 foo",
    "XSETID s 7-0 ENTRIESADDED",
    "XSETID s 18446744073709551615-18446744073709551615",
    "XADD s * f v",
    "XADD s 18446744073709551615-* f v",
    "XDEL s 1-1 2-1",
    "XSETID s 1-0",
    "XSETID s -",
    "XSETID s +",
    "SET str x",
    "XSETID str 1-1",
    "XSETID s",
];

const XREAD: &[&str] = &[
    "XREAD STREAMS nokey 0",
    "XREAD GROUP g c STREAMS s >",
    "XREAD NOACK STREAMS s 0",
    "XREAD COUNT 1 GROUP g STREAMS s 0",
    "XREAD STREAMS nokey $",
    "XADD s 1-1 a 1",
    "XADD s 2-1 b 2",
    "XADD t 5-0 c 3",
    "XREAD STREAMS s 0",
    "XREAD STREAMS s 1-1",
    "XREAD STREAMS s 2-1",
    "XREAD STREAMS s $",
    "XREAD COUNT 1 STREAMS s t 0 0",
    "XREAD COUNT -5 STREAMS s t nokey 0 0 0",
    "XREAD COUNT 9223372036854775807 STREAMS s 0",
    "XREAD COUNT 0 STREAMS t s 4 1",
    "XREAD STREAMS s t 0",
    "XREAD STREAMS s >",
    "XREAD STREAMS s x",
    "XREAD STREAMS s -",
    "XREAD STREAMS s +",
    "XREAD COUNT x STREAMS s 0",
    "XREAD BLOCK x STREAMS s 0",
    "XREAD BLOCK -1 STREAMS s 0",
    "XREAD BLOCK 1.5 STREAMS s 0",
    "XREAD BLOCK 10 STREAMS s 0",
    "XREAD BLOCK 10 STREAMS nokey 0",
    "XREAD BLOCK 10 STREAMS s $",
    "XREAD FOO 1 STREAMS s 0",
    "XREAD COUNT 1 BLOCK",
    "XREAD COUNT 1 COUNT",
    "SET str x",
    "XREAD STREAMS str 0",
    "XREAD STREAMS s str 0 0",
    "XREAD STREAMS str s x 0",
    "XREAD STREAMS s str x 0",
    "MULTI",
    "XREAD BLOCK 0 STREAMS nokey 0",
    "XREAD BLOCK 0 STREAMS s 0",
    "EXEC",
    "EVAL \"return redis.call('XREAD', 'STREAMS', KEYS[1], '0')\" 1 s",
    "EVAL \"return redis.pcall('xread', 'BLOCK', '0', 'STREAMS', KEYS[1], '0')\" 1 s",
    "XREAD",
    "XREAD STREAMS s",
];

/// Consumer groups: XGROUP, XREADGROUP, XACK, XPENDING (idle times differ by nature: those
/// lines compare the reply's shape).
const GROUPS: &[&str] = &[
    "XGROUP CREATE s g $",
    "EXISTS s",
    "XGROUP CREATE s g abc MKSTREAM",
    "EXISTS s",
    "XGROUP CREATE s g $ MKSTREAM",
    "TYPE s",
    "XLEN s",
    "XGROUP CREATE s g $",
    "XGROUP CREATE s g2 0 ENTRIESREAD -5",
    "XGROUP CREATE s g2 0 ENTRIESREAD x",
    "XGROUP CREATE s g2 0 ENTRIESREAD -1",
    "XGROUP CREATE s g3 abc",
    "XGROUP CREATE s g4 0 foo",
    "xgroup cReate s g4 0 foo",
    "xgroup setid s g 0 foo",
    "XGROUP CREATE s g4 0 MKSTREAM ENTRIESREAD 1 x",
    "XGROUP CREATE s g4 0 ENTRIESREAD",
    "XGROUP SETID s nog 0",
    "XGROUP SETID nokey g 0",
    "XGROUP SETID s g 0 foo",
    "XGROUP SETID s g 0 ENTRIESREAD 3",
    "XGROUP SETID s g x",
    "XGROUP DESTROY s nog",
    "XGROUP DESTROY nokey g",
    "XGROUP CREATECONSUMER s g c",
    "XGROUP CREATECONSUMER s g c",
    "XGROUP CREATECONSUMER s nog c",
    "XGROUP CREATECONSUMER nokey g c",
    "XGROUP DELCONSUMER s g c",
    "XGROUP DELCONSUMER s g zz",
    "XGROUP DELCONSUMER s nog c",
    "XGROUP FOO s",
    "XGROUP",
    "XGROUP CREATE s",
    "XGROUP DESTROY s g x",
    "XGROUP HELP",
    "XGROUP HELP x",
    "SET str x",
    "XGROUP CREATE str g $",
    "XGROUP CREATE str g $ MKSTREAM",
    "XADD s 1-1 a 1",
    "XADD s 2-1 b 2",
    "XADD s 3-1 c 3",
    "XREADGROUP GROUP g alice COUNT 1 STREAMS s >",
    "XREADGROUP GROUP g bob STREAMS s >",
    "XREADGROUP GROUP g bob STREAMS s >",
    "XREADGROUP GROUP nog c STREAMS s >",
    "XREADGROUP GROUP g c STREAMS nokey >",
    "XREADGROUP GROUP g c STREAMS str >",
    "XREADGROUP GROUP g c STREAMS s $",
    "XREADGROUP GROUP g c STREAMS s x",
    "XREADGROUP GROUP g c STREAMS s",
    "XREADGROUP GROUP g c COUNT 1 STREAMS s > >",
    "XREADGROUP COUNT 1 NOACK STREAMS s >",
    "XREADGROUP GROUP g c FOO STREAMS s >",
    "XPENDING s g",
    "XPENDING s nog",
    "XPENDING nokey g",
    "XPENDING str g",
    "XPENDING s g - +",
    "~ XPENDING s g - + 10 bob extra",
    "XPENDING s g IDLE 5 - +",
    "XPENDING s g IDLE x - + 10",
    "XPENDING s g - + x",
    "XPENDING s g x + 10",
    "XPENDING s g (- + 10",
    "XPENDING s g IDLE 100000000 - + 10",
    "XPENDING s g - + 0",
    "XPENDING s g - + 10 nobody",
    "~ XPENDING s g - + 10",
    "~ XPENDING s g (1-1 + 1 bob",
    "XREADGROUP GROUP g alice STREAMS s 0",
    "XREADGROUP GROUP g bob COUNT 1 STREAMS s 2",
    "XREADGROUP GROUP g nobody STREAMS s 0",
    "XGROUP CREATECONSUMER s g nobody",
    "XDEL s 2-1",
    "XREADGROUP GROUP g bob STREAMS s 0-0",
    "XACK s g 1-1 abc",
    "XACK nokey g abc",
    "XACK s nog abc",
    "XACK str g 1-1",
    "XACK s g 1-1 1-1 9-9",
    "XPENDING s g",
    "XGROUP DELCONSUMER s g bob",
    "XPENDING s g",
    "XADD s 4-1 d 4",
    "XREADGROUP GROUP g carol NOACK STREAMS s >",
    "XPENDING s g",
    "XGROUP SETID s g 0",
    "XREADGROUP GROUP g dave STREAMS s >",
    "XPENDING s g",
    "XGROUP SETID s g $",
    "XREADGROUP GROUP g dave STREAMS s >",
    "XGROUP CREATE s g5 0",
    "XREADGROUP GROUP g5 x COUNT 2 STREAMS s s > >",
    "XGROUP DESTROY s g5",
    "XGROUP DESTROY s g5",
    "COPY s s2",
    "XPENDING s2 g",
    "XREADGROUP GROUP g dave STREAMS s2 0",
    "DEL s",
    "XPENDING s g",
    "XGROUP CREATE s g 0 MKSTREAM",
    "XPENDING s g",
    "EVAL \"return redis.call('XREADGROUP', 'GROUP', 'g', 'c', 'STREAMS', KEYS[1], '>')\" 1 s2",
    "EVAL \"return redis.pcall('XREADGROUP', 'GROUP', 'g', 'c', 'BLOCK', '0', 'STREAMS', KEYS[1], '>')\" 1 s2",
    "MULTI",
    "XREADGROUP GROUP g c BLOCK 0 STREAMS s >",
    "EXEC",
    "XREADGROUP GROUP g c BLOCK 10 STREAMS s >",
];

/// XCLAIM and XAUTOCLAIM (idle times differ by nature: claims use 0 or a huge minimum).
const CLAIM: &[&str] = &[
    "XCLAIM nokey g c 0 1-1",
    "XAUTOCLAIM nokey g c 0 0",
    "SET str x",
    "XCLAIM str g c 0 1-1",
    "XAUTOCLAIM str g c 0 0",
    "XADD s 1-1 a 1",
    "XADD s 2-1 b 2",
    "XADD s 3-1 c 3",
    "XADD s 4-1 d 4",
    "XCLAIM s g c 0 1-1",
    "XAUTOCLAIM s g c 0 0",
    "XGROUP CREATE s g 0",
    "XREADGROUP GROUP g alice STREAMS s >",
    "XCLAIM s g bob x 1-1",
    "XCLAIM s g bob 0 1-1 FOO",
    "XCLAIM s g bob 0 1-1 IDLE x",
    "XCLAIM s g bob 0 1-1 TIME x",
    "XCLAIM s g bob 0 1-1 RETRYCOUNT x",
    "XCLAIM s g bob 0 1-1 LASTID x",
    "XCLAIM s g bob 0 1-1 -",
    "XCLAIM s g bob 100000000 1-1 2-1",
    "XCLAIM s g bob 0 1-1 2-1 9-9",
    "XPENDING s g",
    "XCLAIM s g carol 0 1-1 JUSTID",
    "XCLAIM s g carol 0 3-1 IDLE 5000 RETRYCOUNT 7 JUSTID",
    "XPENDING s g",
    "~ XPENDING s g IDLE 4000 - + 10 carol",
    "XDEL s 2-1",
    "XCLAIM s g dave 0 2-1",
    "XPENDING s g",
    "XADD s 5-1 e 5",
    "XCLAIM s g dave 0 5-1",
    "XCLAIM s g dave 0 5-1 FORCE JUSTID",
    "XPENDING s g",
    "XCLAIM s g dave 0 5-1 LASTID 6-0",
    "XREADGROUP GROUP g alice STREAMS s >",
    "XADD s 7-1 f 6",
    "XREADGROUP GROUP g alice STREAMS s >",
    "XAUTOCLAIM s g eve 0 0 COUNT 0",
    "XAUTOCLAIM s g eve 0 0 COUNT -1",
    "XAUTOCLAIM s g eve 0 0 COUNT x",
    "XAUTOCLAIM s g eve 0 0 COUNT 9223372036854775807",
    "XAUTOCLAIM s g eve 0 0 COUNT 576460752303423487 JUSTID",
    "XAUTOCLAIM s g eve x 0",
    "XAUTOCLAIM s g eve 0 x",
    "XAUTOCLAIM s g eve 0 (18446744073709551615-18446744073709551615",
    "XAUTOCLAIM s g eve 0 0 FOO",
    "XAUTOCLAIM s nog eve 0 0",
    "XAUTOCLAIM s g eve 100000000 0",
    "XAUTOCLAIM s g eve 0 0 COUNT 1",
    "XAUTOCLAIM s g eve 0 3-1 COUNT 1 JUSTID",
    "XDEL s 4-1 5-1",
    "XAUTOCLAIM s g frank 0 - COUNT 2",
    "XAUTOCLAIM s g frank 0 (1-1 COUNT 2",
    "XPENDING s g",
    "XAUTOCLAIM s g frank 0 - JUSTID",
    "XPENDING s g - + 10 nobody",
];

/// XINFO, with 7.0's entries-read and lag through reads, deletions and trims (idle and seen
/// times differ by nature: those lines compare the reply's shape).
const XINFO: &[&str] = &[
    "XINFO STREAM nokey",
    "XINFO GROUPS nokey",
    "XINFO CONSUMERS nokey g",
    "SET str x",
    "XINFO STREAM str",
    "XINFO HELP",
    "XINFO FOO s",
    "XINFO GROUPS",
    "XGROUP CREATE e g $ MKSTREAM",
    "XINFO STREAM e",
    "XINFO GROUPS e",
    "XINFO STREAM e FULL",
    "XADD s 1-1 a 1",
    "XADD s 2-1 b 2",
    "XADD s 3-1 c 3",
    "XINFO STREAM s foo",
    "XINFO STREAM s FULL COUNT",
    "xinfo sTream s full count",
    "XINFO STREAM s FULL COUNT x",
    "XINFO STREAM s FULL LIMIT 1",
    "XGROUP CREATE s g1 $",
    "XGROUP CREATE s g0 0",
    "XGROUP CREATE s g2 2-1",
    "XGROUP CREATE s g3 0 ENTRIESREAD 1",
    "XINFO STREAM s",
    "XINFO GROUPS s",
    "XINFO CONSUMERS s nog",
    "XINFO CONSUMERS s g0",
    "XREADGROUP GROUP g0 c1 COUNT 1 STREAMS s >",
    "XREADGROUP GROUP g3 c1 COUNT 1 STREAMS s >",
    "XREADGROUP GROUP g2 c1 STREAMS s >",
    "XINFO GROUPS s",
    "~ XINFO CONSUMERS s g0",
    "XADD s 4-1 d 4",
    "XINFO GROUPS s",
    "XDEL s 3-1",
    "XINFO GROUPS s",
    "XREADGROUP GROUP g0 c2 STREAMS s >",
    "XINFO GROUPS s",
    "XDEL s 1-1",
    "XINFO STREAM s",
    "XINFO GROUPS s",
    "XGROUP SETID s g1 0 ENTRIESREAD 0",
    "XGROUP SETID s g2 $",
    "XINFO GROUPS s",
    "XTRIM s MAXLEN 1",
    "XINFO STREAM s",
    "XINFO GROUPS s",
    "~ XINFO STREAM s FULL",
    "~ XINFO STREAM s FULL COUNT 1",
    "XDEL s 4-1",
    "XINFO STREAM s",
    "XINFO GROUPS s",
    "XSETID s 10-0 ENTRIESADDED 20 MAXDELETEDID 5-0",
    "XINFO STREAM s",
    "XINFO GROUPS s",
];

/// The type everywhere a type shows.
const TYPES: &[&str] = &[
    "XADD s 1-1 f v",
    "XADD s 2-1 g w",
    "TYPE s",
    "OBJECT ENCODING s",
    "SCAN 0 TYPE stream",
    "SCAN 0 TYPE STREAM",
    "COPY s c",
    "XRANGE c - +",
    "XADD c 2-1 f v",
    "XADD c 3-* f v",
    "RENAME c r",
    "XADD r 3-1 f v",
    "XADD r 3-* f v",
    "XRANGE r - +",
    "MOVE r 1",
    "SELECT 1",
    "XLEN r",
    "XADD r 3-2 f v",
    "XADD r 3-* f v",
    "SELECT 0",
    "EXPIRE s 100",
    "TTL s",
    "PERSIST s",
    "DEBUG DIGEST-VALUE s",
    "DEBUG DIGEST",
    "LPUSH s x",
    "GET s",
    "HSET s f v",
    "DEL s",
    "XADD s 1-1 f v",
    "XDEL s 1-1",
    "DEBUG DIGEST-VALUE s",
    "SWAPDB 0 1",
    "XLEN r",
    "FLUSHALL",
    "XLEN r",
];

/// Stream categories and specs as COMMAND shows them.
const INFO: &[&str] = &[
    "COMMAND INFO xadd xrange xrevrange xlen xdel xtrim xsetid xread",
    "COMMAND INFO xreadgroup xack xpending xgroup|create xgroup|help",
    "COMMAND GETKEYS xreadgroup group g c count 1 noack streams a b > >",
    "COMMAND GETKEYS xread count 1 block 5 streams a b 0 0",
    "COMMAND GETKEYS xadd s * f v",
];

async fn connect(addr: std::net::SocketAddr, resp3: bool) -> Vec<Raw> {
    let mut conns = Vec::new();
    for _ in 0..2 {
        let mut c = Raw::connect(addr).await;
        if resp3 {
            assert!(matches!(c.cmd(&["HELLO", "3"]).await, Frame::Map(_)));
        }
        conns.push(c);
    }
    conns
}

async fn call(c: &mut Raw, argv: &[Vec<u8>]) -> Vec<u8> {
    let args: Vec<&[u8]> = argv.iter().map(|a| a.as_slice()).collect();
    c.send(&encode_command(&args)).await;
    c.read_raw().await.expect("a reply")
}

async fn run_scripts(resp3: bool) {
    let Some(_) = redis_server() else {
        eprintln!("redis-server is not installed: skipping the differential tests");
        return;
    };
    let tmp = tempfile::tempdir().expect("temp dir");
    let proto = if resp3 { "resp3" } else { "resp2" };
    let mut failures = Vec::new();
    for (name, lines) in SCRIPTS {
        let redis =
            spawn_redis_with(tmp.path(), &["--enable-debug-command", "yes"]).expect("redis-server");
        let relis = start_with(|c| c.set("enable-debug-command", "yes").unwrap()).await;
        let mut want = connect(redis.addr(), resp3).await;
        let mut got = connect(relis.addr, resp3).await;
        for (n, line) in lines.iter().enumerate() {
            let shape_only = line.starts_with("~ ");
            let line = line.trim_start_matches("~ ");
            let (conn, line) = match line.strip_prefix('@') {
                Some(rest) => {
                    let (n, rest) = rest.split_once(' ').unwrap();
                    (n.parse::<usize>().unwrap() - 1, rest)
                }
                None => (0, line),
            };
            let argv = split_args(line);
            let w = call(&mut want[conn], &argv).await;
            let g = call(&mut got[conn], &argv).await;
            let same = if shape_only { w[0] == g[0] } else { w == g };
            if !same {
                failures.push(format!(
                    "{proto} {name} line {}: {line}\n   redis: {}\n   relis: {}",
                    n + 1,
                    show(&w),
                    show(&g)
                ));
            }
        }
    }
    assert!(
        failures.is_empty(),
        "{} replies differ from redis-server:\n{}",
        failures.len(),
        failures.join("\n")
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn scripts_match_redis_resp2() {
    run_scripts(false).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn scripts_match_redis_resp3() {
    run_scripts(true).await;
}

/// `[[key, [[id, [f, v]]]]]`, XREAD's RESP2 reply for one entry of one stream.
fn one_entry(key: &str, id: &str, f: &str, v: &str) -> Frame {
    arr(vec![arr(vec![
        bulk(key),
        arr(vec![arr(vec![bulk(id), bulks(&[f, v])])]),
    ])])
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn xread_block_is_served_by_xadd_from_anywhere() {
    let s = start().await;
    let mut ctl = s.raw().await;
    let mut a = s.raw().await;
    let mut b = s.raw().await;
    ctl.cmd(&["XADD", "s", "1-1", "old", "x"]).await;
    // `$` means after what is there now: both wait, and one XADD serves both.
    send(&mut a, &["XREAD", "BLOCK", "0", "STREAMS", "s", "$"]).await;
    send(
        &mut b,
        &[
            "XREAD", "COUNT", "5", "BLOCK", "0", "STREAMS", "other", "s", "0", "$",
        ],
    )
    .await;
    wait_blocked(&mut ctl, 2).await;
    assert_eq!(ctl.cmd(&["XADD", "s", "2-1", "f", "v"]).await, bulk("2-1"));
    assert_eq!(a.read().await.unwrap(), one_entry("s", "2-1", "f", "v"));
    assert_eq!(b.read().await.unwrap(), one_entry("s", "2-1", "f", "v"));
    wait_blocked(&mut ctl, 0).await;

    // From MULTI: served with everything the transaction added after the reader's id.
    send(&mut a, &["XREAD", "BLOCK", "0", "STREAMS", "s", "$"]).await;
    wait_blocked(&mut ctl, 1).await;
    ctl.cmd(&["MULTI"]).await;
    ctl.cmd(&["XADD", "s", "3-1", "f", "v"]).await;
    ctl.cmd(&["XADD", "s", "3-2", "g", "w"]).await;
    ctl.cmd(&["EXEC"]).await;
    let got = a.read().await.unwrap();
    assert_eq!(
        got,
        arr(vec![arr(vec![
            bulk("s"),
            arr(vec![
                arr(vec![bulk("3-1"), bulks(&["f", "v"])]),
                arr(vec![bulk("3-2"), bulks(&["g", "w"])]),
            ]),
        ])])
    );

    // From a script, onto a key that did not exist, with the reader in RESP3 (a map).
    a.cmd(&["HELLO", "3"]).await;
    send(
        &mut a,
        &["XREAD", "BLOCK", "0", "STREAMS", "s", "new", "$", "$"],
    )
    .await;
    wait_blocked(&mut ctl, 1).await;
    ctl.cmd(&[
        "EVAL",
        "return redis.call('XADD', KEYS[1], '7-7', 'k', 'v')",
        "1",
        "new",
    ])
    .await;
    assert_eq!(
        a.read().await.unwrap(),
        Frame::Map(vec![(
            bulk("new"),
            arr(vec![arr(vec![bulk("7-7"), bulks(&["k", "v"])])])
        )])
    );

    // A key that turns into another type does not serve the reader; the stream does.
    send(
        &mut b,
        &["XREAD", "BLOCK", "0", "STREAMS", "l", "s", "$", "$"],
    )
    .await;
    wait_blocked(&mut ctl, 1).await;
    ctl.cmd(&["LPUSH", "l", "x"]).await;
    let r = tokio::time::timeout(std::time::Duration::from_millis(100), b.read()).await;
    assert!(r.is_err(), "still blocked: {r:?}");
    ctl.cmd(&["XADD", "s", "9-0", "f", "v"]).await;
    assert_eq!(b.read().await.unwrap(), one_entry("s", "9-0", "f", "v"));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn xread_block_times_out_with_a_null_array() {
    let s = start().await;
    let mut c = s.raw().await;
    c.cmd(&["XADD", "s", "1-1", "f", "v"]).await;
    let t = std::time::Instant::now();
    send(&mut c, &["XREAD", "BLOCK", "50", "STREAMS", "s", "$"]).await;
    assert_eq!(c.read_raw().await.unwrap(), b"*-1\r\n");
    assert!(t.elapsed() >= std::time::Duration::from_millis(50));
    c.cmd(&["HELLO", "3"]).await;
    send(
        &mut c,
        &["XREAD", "BLOCK", "50", "STREAMS", "s", "nokey", "$", "0"],
    )
    .await;
    assert_eq!(c.read_raw().await.unwrap(), b"_\r\n");
    // The connection goes on, and nothing is left blocked.
    assert_eq!(c.cmd(&["XLEN", "s"]).await, int(1));
    wait_blocked(&mut c, 0).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn keyspace_events_are_redis_events() {
    let Some(_) = redis_server() else {
        return;
    };
    let tmp = tempfile::tempdir().unwrap();
    let redis = spawn_redis(tmp.path()).unwrap();
    let relis = start().await;
    let lines: &[&[&str]] = &[
        &["XADD", "s", "1-1", "f", "v"],
        &["XADD", "s", "MAXLEN", "1", "2-1", "f", "v"],
        &["XADD", "s", "MAXLEN", "5", "3-1", "f", "v"],
        &["XDEL", "s", "1-1"],
        &["XDEL", "s", "2-1"],
        &["XTRIM", "s", "MAXLEN", "0"],
        &["XTRIM", "s", "MAXLEN", "0"],
        &["XSETID", "s", "9-9"],
        &["XADD", "nope", "NOMKSTREAM", "*", "f", "v"],
        &["DEL", "s"],
    ];
    let mut seen = Vec::new();
    for addr in [redis.addr(), relis.addr] {
        let mut ctl = Raw::connect(addr).await;
        let mut sub = Raw::connect(addr).await;
        ctl.cmd(&["CONFIG", "SET", "notify-keyspace-events", "KEA"])
            .await;
        sub.cmd(&["PSUBSCRIBE", "__key*__:*"]).await;
        sub.cmd(&["SUBSCRIBE", "end"]).await;
        for l in lines {
            ctl.cmd(l).await;
        }
        ctl.cmd(&["PUBLISH", "end", "x"]).await;
        let mut events = Vec::new();
        loop {
            let m = sub.read().await.unwrap();
            let Frame::Array(parts) = m else { panic!() };
            let text: Vec<String> = parts
                .iter()
                .map(|p| match p {
                    Frame::Bulk(b) => String::from_utf8_lossy(b).into_owned(),
                    other => format!("{other:?}"),
                })
                .collect();
            if text[0] == "message" {
                break;
            }
            events.push(text[2..].join(" "));
        }
        seen.push(events);
    }
    assert!(
        seen[0].iter().any(|e| e.ends_with("xsetid")),
        "{:?}",
        seen[0]
    );
    assert_eq!(seen[1], seen[0]);
}

/// Streams (with their last ids, deleted ids and entries added) come back after a restart,
/// byte for byte as DEBUG DIGEST and XINFO-free commands see them.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn streams_survive_a_restart_and_a_kill() {
    let dir = tempfile::tempdir().unwrap();
    let debug = ["--enable-debug-command", "yes"];
    let mut child = spawn_binary(dir.path(), &debug);
    let mut c = Raw::connect(child.addr()).await;
    for i in 1..=2000 {
        c.cmd(&["XADD", "big", &format!("{i}-0"), "f", &i.to_string()])
            .await;
    }
    c.cmd(&["XADD", "s", "5-5", "a", "1", "b", "2"]).await;
    c.cmd(&["XADD", "s", "6-0", "c", "3"]).await;
    c.cmd(&["XDEL", "s", "6-0"]).await;
    c.cmd(&["XSETID", "s", "10-0", "ENTRIESADDED", "40"]).await;
    let before = state(&mut c).await;
    drop(c);
    child.kill9();
    let child = spawn_binary(dir.path(), &debug);
    let mut c = Raw::connect(child.addr()).await;
    assert_eq!(state(&mut c).await, before);
    // The last id (set past the last entry) survived.
    assert_eq!(c.cmd(&["XADD", "s", "10-*", "x", "y"]).await, bulk("10-1"));
    assert_eq!(c.cmd(&["XLEN", "s"]).await, int(2));
}

/// What a restart must keep: the digest of everything and the replies that show it.
async fn state(c: &mut Raw) -> Vec<Frame> {
    vec![
        c.cmd(&["DEBUG", "DIGEST"]).await,
        c.cmd(&["XRANGE", "s", "-", "+"]).await,
        c.cmd(&["XLEN", "big"]).await,
        c.cmd(&["XREVRANGE", "big", "+", "-", "COUNT", "2"]).await,
        c.cmd(&["XADD", "s", "9-0", "f", "v"]).await,
    ]
}

/// A worker pool's life: two consumers read, one dies with work pending, another claims it
/// with XAUTOCLAIM and acknowledges it; the delivery counts say what happened.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_consumer_group_life_over_two_connections() {
    let s = start().await;
    let mut ctl = s.raw().await;
    let mut w1 = s.raw().await;
    let mut w2 = s.raw().await;
    assert_eq!(
        ctl.cmd(&["XGROUP", "CREATE", "jobs", "workers", "$", "MKSTREAM"])
            .await,
        ok()
    );
    // w2 waits for work; w1 is busy elsewhere.
    send(
        &mut w2,
        &[
            "XREADGROUP",
            "GROUP",
            "workers",
            "w2",
            "BLOCK",
            "0",
            "STREAMS",
            "jobs",
            ">",
        ],
    )
    .await;
    wait_blocked(&mut ctl, 1).await;
    ctl.cmd(&["XADD", "jobs", "1-1", "job", "a"]).await;
    assert_eq!(
        w2.read().await.unwrap(),
        one_entry("jobs", "1-1", "job", "a")
    );
    ctl.cmd(&["XADD", "jobs", "2-1", "job", "b"]).await;
    assert_eq!(
        w1.cmd(&[
            "XREADGROUP",
            "GROUP",
            "workers",
            "w1",
            "STREAMS",
            "jobs",
            ">"
        ])
        .await,
        one_entry("jobs", "2-1", "job", "b")
    );
    // w1 dies with 2-1 pending.
    drop(w1);
    assert_eq!(w2.cmd(&["XACK", "jobs", "workers", "1-1"]).await, int(1));
    let claimed = w2
        .cmd(&["XAUTOCLAIM", "jobs", "workers", "w2", "0", "0"])
        .await;
    assert_eq!(
        claimed,
        arr(vec![
            bulk("0-0"),
            arr(vec![arr(vec![bulk("2-1"), bulks(&["job", "b"])])]),
            arr(vec![]),
        ])
    );
    let Frame::Array(rows) = w2
        .cmd(&["XPENDING", "jobs", "workers", "-", "+", "10"])
        .await
    else {
        panic!()
    };
    let Frame::Array(row) = &rows[0] else {
        panic!()
    };
    assert_eq!(
        (&row[0], &row[1], &row[3]),
        (&bulk("2-1"), &bulk("w2"), &int(2))
    );
    assert_eq!(w2.cmd(&["XACK", "jobs", "workers", "2-1"]).await, int(1));
    assert_eq!(
        w2.cmd(&["XPENDING", "jobs", "workers"]).await,
        arr(vec![int(0), Frame::Null, Frame::Null, Frame::NullArray])
    );
    // A reader blocked on a group that goes away is told so; one that waits times out.
    send(
        &mut w2,
        &[
            "XREADGROUP",
            "GROUP",
            "workers",
            "w2",
            "BLOCK",
            "0",
            "STREAMS",
            "jobs",
            ">",
        ],
    )
    .await;
    wait_blocked(&mut ctl, 1).await;
    ctl.cmd(&["XGROUP", "DESTROY", "jobs", "workers"]).await;
    ctl.cmd(&["XADD", "jobs", "3-1", "job", "c"]).await;
    assert_eq!(
        w2.read().await.unwrap(),
        err("NOGROUP the consumer group this client was blocked on no longer exists")
    );
    ctl.cmd(&["XGROUP", "CREATE", "jobs", "workers", "$"]).await;
    send(
        &mut w2,
        &[
            "XREADGROUP",
            "GROUP",
            "workers",
            "w2",
            "BLOCK",
            "30",
            "STREAMS",
            "jobs",
            ">",
        ],
    )
    .await;
    assert_eq!(w2.read_raw().await.unwrap(), b"*-1\r\n");
}

/// Groups, consumers, pending entries and delivery counts survive kill -9.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn consumer_groups_survive_a_kill() {
    let dir = tempfile::tempdir().unwrap();
    let mut child = spawn_binary(dir.path(), &[]);
    let mut c = Raw::connect(child.addr()).await;
    c.cmd(&["XGROUP", "CREATE", "s", "g", "0", "MKSTREAM"])
        .await;
    for i in 1..=5 {
        c.cmd(&["XADD", "s", &format!("{i}-0"), "f", "v"]).await;
    }
    c.cmd(&[
        "XREADGROUP",
        "GROUP",
        "g",
        "a",
        "COUNT",
        "3",
        "STREAMS",
        "s",
        ">",
    ])
    .await;
    c.cmd(&[
        "XCLAIM",
        "s",
        "g",
        "b",
        "0",
        "2-0",
        "TIME",
        "1000",
        "RETRYCOUNT",
        "9",
    ])
    .await;
    c.cmd(&["XGROUP", "CREATECONSUMER", "s", "g", "idle"]).await;
    let before_summary = c.cmd(&["XPENDING", "s", "g"]).await;
    drop(c);
    child.kill9();
    let child = spawn_binary(dir.path(), &[]);
    let mut c = Raw::connect(child.addr()).await;
    assert_eq!(c.cmd(&["XPENDING", "s", "g"]).await, before_summary);
    let after = group_state(&mut c).await;
    let Frame::Array(rows) = &after[1] else {
        panic!()
    };
    let Frame::Array(row) = &rows[0] else {
        panic!()
    };
    // Claimed with TIME 1000: idle since 1970, delivered 9 times.
    assert_eq!(
        (&row[0], &row[1], &row[3]),
        (&bulk("2-0"), &bulk("b"), &int(9))
    );
    assert_eq!(after[2], int(0), "the consumer survived");
    assert_eq!(after[3], int(2), "a still had two pending");
    // The group's last delivered id survived: only the two unread entries are new.
    let Frame::Array(got) = c
        .cmd(&["XREADGROUP", "GROUP", "g", "a", "STREAMS", "s", ">"])
        .await
    else {
        panic!()
    };
    let Frame::Array(pair) = &got[0] else {
        panic!()
    };
    let Frame::Array(entries) = &pair[1] else {
        panic!()
    };
    assert_eq!(entries.len(), 2);
}

/// A group's state as replies show it (the last two change it).
async fn group_state(c: &mut Raw) -> Vec<Frame> {
    vec![
        c.cmd(&["XPENDING", "s", "g"]).await,
        c.cmd(&["XPENDING", "s", "g", "-", "+", "10", "b"]).await,
        c.cmd(&["XGROUP", "CREATECONSUMER", "s", "g", "idle"]).await,
        c.cmd(&["XGROUP", "DELCONSUMER", "s", "g", "a"]).await,
    ]
}
