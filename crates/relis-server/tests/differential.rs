//! Differential tests: the same scripted command lines go to redis-server 7.0 (the reference,
//! started as a child process) and to Relis, and every reply must be the same bytes, under
//! RESP2 and again under RESP3 (`HELLO 3`).
//!
//! A script is a list of command lines, split like redis-cli splits them ("double quotes" with
//! `\xHH` escapes, 'single quotes'). To extend coverage, add lines or scripts to [`SCRIPTS`].
//! Line prefixes:
//! - `@2 ` sends the line on the script's second connection (`@1` is the default; up to `@3`),
//!   for WATCH and other cross-client behaviour;
//! - `~ ` compares only the reply's type (its first byte), for replies that legitimately differ
//!   between two servers (a PTTL a millisecond apart);
//! - `!resp2 ` / `!resp3 ` runs the line only under that protocol.
//!
//! Lines whose replies legitimately differ (INFO, CLIENT ID, TIME, RANDOMKEY over many keys,
//! OBJECT IDLETIME, SCAN cursors, COMMAND COUNT) stay out of the scripts, and so do CLIENT
//! NO-TOUCH and CLIENT SETINFO: Redis 7.2 added them, clients of today send them, and Relis
//! accepts them on purpose where 7.0 does not know them. The tests skip when
//! redis-server is not installed, except under CI (`CI` set), where that is a failure.

mod common;
use common::*;

/// The scripts: (name, command lines).
const SCRIPTS: &[(&str, &[&str])] = &[
    ("ping-echo", PING_ECHO),
    ("set-get", SET_GET),
    ("set-options", SET_OPTIONS),
    ("set-family", SET_FAMILY),
    ("counters", COUNTERS),
    ("ranges", RANGES),
    ("lcs", LCS),
    ("select", SELECT),
    ("keys", KEYS),
    ("expire", EXPIRE),
    ("copy-move-rename", COPY_MOVE_RENAME),
    ("databases", DATABASES),
    ("object", OBJECT),
    ("connection", CONNECTION),
    ("server", SERVER),
    ("multi-exec", MULTI_EXEC),
    ("watch", WATCH),
    ("errors", ERRORS),
];

const PING_ECHO: &[&str] = &[
    "PING",
    "ping",
    "PING hello",
    "PING \"\"",
    "PING a b",
    "ECHO hello",
    "ECHO \"\"",
    "ECHO \"\\x00\\r\\n\\xff\"",
    "ECHO",
    "ECHO a b",
];

const SET_GET: &[&str] = &[
    "GET missing",
    "SET k v",
    "GET k",
    "SET k \"\"",
    "GET k",
    "SET \"\" empty-key",
    "GET \"\"",
    "SET \"a\\x00b\" \"\\x00\\r\\n\"",
    "GET \"a\\x00b\"",
    "GET a",
    "SET n 12345",
    "GET n",
    "SET n -0",
    "GET n",
    "SET f 3.14",
    "GET f",
    "SET k v extra",
    "GET",
    "GET a b",
    "SET",
    "SET k",
    "set K V",
    "get K",
    "get k",
];

const SET_OPTIONS: &[&str] = &[
    // NX / XX
    "SET a 1 NX",
    "SET a 2 NX",
    "GET a",
    "SET a 3 XX",
    "GET a",
    "SET b 1 XX",
    "GET b",
    "SET a 4 NX XX",
    "SET a 4 XX NX",
    "SET a 4 nx",
    "SET a 4 xx",
    // GET
    "SET a 5 GET",
    "SET new 1 GET",
    "GET new",
    "SET a 6 NX GET",
    "SET fresh 1 NX GET",
    "SET a 7 XX GET",
    "SET nope 7 XX GET",
    "GET nope",
    // Expiry options and their errors
    "SET e v EX 100",
    "TTL e",
    "~ PTTL e",
    "SET e v PX 100000",
    "TTL e",
    "SET e v EXAT 4102444800",
    "EXPIRETIME e",
    "PEXPIRETIME e",
    "SET e v PXAT 4102444800123",
    "PEXPIRETIME e",
    "SET e v2 KEEPTTL",
    "PEXPIRETIME e",
    "GET e",
    "SET e v3",
    "TTL e",
    "SET e v EX 0",
    "SET e v EX -1",
    "SET e v PX 0",
    "SET e v EXAT 0",
    "SET e v PXAT -5",
    "SET e v EX abc",
    "SET e v EX 1.5",
    "SET e v EX",
    "SET e v EX 10 PX 10",
    "SET e v EX 10 EX 10",
    "SET e v EX 10 KEEPTTL",
    "SET e v KEEPTTL PX 10",
    "SET e v EX 9223372036854775807",
    "SET e v PX 9223372036854775807",
    "SET e v EX 9223372036854775",
    "SET e v EXAT 9223372036854775",
    "SET e v EX 99999999999999999999",
    "SET e v BOGUS",
    "SET e v NX GET EX 100 ",
    "TTL e",
    "SET e v GET GET",
    "SET e v ex 100 get",
    "GET e",
    // Wrong type for GET is covered once other types exist.
];

const SET_FAMILY: &[&str] = &[
    "SETNX s 1",
    "SETNX s 2",
    "GET s",
    "SETNX s",
    "SETEX x 100 v",
    "TTL x",
    "GET x",
    "SETEX x 0 v",
    "SETEX x -10 v",
    "SETEX x abc v",
    "SETEX x 100",
    "PSETEX p 100000 v",
    "TTL p",
    "PSETEX p 0 v",
    "PSETEX p -1 v",
    "GETSET g 1",
    "GETSET g 2",
    "GET g",
    "GETSET g",
    "GETDEL g",
    "GETDEL g",
    "GET g",
    "SET ge v EX 100",
    "GETEX ge",
    "TTL ge",
    "GETEX ge PERSIST",
    "TTL ge",
    "GETEX ge EX 200",
    "TTL ge",
    "GETEX ge PX 300000",
    "TTL ge",
    "GETEX ge EXAT 4102444800",
    "EXPIRETIME ge",
    "GETEX ge PXAT 4102444800999",
    "PEXPIRETIME ge",
    "GETEX ge EX 0",
    "GETEX ge EX -1",
    "GETEX ge EX 10 PX 10",
    "GETEX ge PERSIST EX 10",
    "GETEX ge BOGUS",
    "GETEX missing",
    "GETEX missing EX 10",
    "GETEX missing EX 0",
    "MSET a 1 b 2 c 3",
    "MGET a b c missing",
    "MGET missing",
    "MSET a 1 b",
    "MSET",
    "MSETNX a 1 z 2",
    "GET z",
    "MSETNX y 1 z 2",
    "MGET y z",
    "MSETNX y",
];

const COUNTERS: &[&str] = &[
    "INCR c",
    "INCR c",
    "GET c",
    "DECR c",
    "DECR fresh",
    "INCRBY c 10",
    "INCRBY c -100",
    "DECRBY c 5",
    "DECRBY c -5",
    "INCRBY c abc",
    "INCRBY c 1.5",
    "INCRBY c \"\"",
    "INCRBY c \" 1\"",
    "INCRBY c 99999999999999999999",
    "DECRBY c -9223372036854775808",
    "SET big 9223372036854775807",
    "INCR big",
    "INCRBY big 0",
    "SET small -9223372036854775808",
    "DECR small",
    "DECRBY small 1",
    "INCRBY small -1",
    "SET s hello",
    "INCR s",
    "SET s \" 1\"",
    "INCR s",
    "SET s \"1 \"",
    "INCR s",
    "SET s 01",
    "INCR s",
    "SET s +1",
    "INCR s",
    "SET s \"\"",
    "INCR s",
    "SET s 0x10",
    "INCR s",
    "SET s 1e3",
    "INCR s",
    "INCR",
    "INCR a b",
    "INCRBY a",
    "DECRBY a 1 2",
    // INCR keeps the TTL.
    "SET t 1 EX 100",
    "INCR t",
    "TTL t",
    // Floats, formatted as Redis formats them.
    "INCRBYFLOAT f 1.5",
    "INCRBYFLOAT f 0.1",
    "INCRBYFLOAT f -0.1",
    "INCRBYFLOAT f 1e3",
    "INCRBYFLOAT f 3.0e-2",
    "INCRBYFLOAT f -1001.53",
    "GET f",
    "INCRBYFLOAT f 10",
    "INCRBYFLOAT f 5.0e3",
    "INCRBYFLOAT f 1.23456789012345678",
    "INCRBYFLOAT f 0x10",
    "INCRBYFLOAT f abc",
    "INCRBYFLOAT f \"\"",
    "INCRBYFLOAT f inf",
    "INCRBYFLOAT f -inf",
    "INCRBYFLOAT f nan",
    "INCRBYFLOAT f 1e308",
    "INCRBYFLOAT f 1e308",
    "SET f 1e308",
    "INCRBYFLOAT f 1e308",
    "SET f \" 1\"",
    "INCRBYFLOAT f 1",
    "SET f 3",
    "INCRBYFLOAT f 0",
    "SET f 3.0",
    "INCRBYFLOAT f 0",
    "SET f 1.5e1",
    "INCRBYFLOAT f 0",
    "SET f 0.1",
    "INCRBYFLOAT f 0.2",
    "SET f 5",
    "INCRBYFLOAT f -5",
    "INCRBYFLOAT f -0.0",
    "SET f hello",
    "INCRBYFLOAT f 1",
    "INCRBYFLOAT f",
    "INCRBYFLOAT newf 2.50",
    "SET i 10",
    "INCRBYFLOAT i 1",
    "INCR i",
    "SET big 9223372036854775807",
    "INCRBYFLOAT big 1",
    "INCR big",
];

const RANGES: &[&str] = &[
    "APPEND a hello",
    "APPEND a \" world\"",
    "GET a",
    "APPEND a \"\"",
    "APPEND a",
    "APPEND n 1",
    "INCR n",
    "APPEND n 0",
    "GET n",
    "STRLEN a",
    "STRLEN missing",
    "STRLEN n",
    "STRLEN",
    "SET e \"\"",
    "STRLEN e",
    "GETRANGE a 0 4",
    "GETRANGE a -5 -1",
    "GETRANGE a 0 -1",
    "GETRANGE a 5 2",
    "GETRANGE a -100 100",
    "GETRANGE a 100 200",
    "GETRANGE a -1 -5",
    "GETRANGE a 0 0",
    "GETRANGE a -1 0",
    "GETRANGE e 0 -1",
    "GETRANGE e 0 0",
    "GETRANGE missing 0 -1",
    "GETRANGE a x 1",
    "GETRANGE a 0",
    "GETRANGE a 0 9223372036854775807",
    "GETRANGE a -9223372036854775808 2",
    "SET n 12345",
    "GETRANGE n 1 2",
    "SUBSTR a 0 4",
    "SUBSTR a -3 -1",
    "SUBSTR a 0",
    "SETRANGE a 6 WORLD",
    "GET a",
    "SETRANGE a 20 !",
    "GET a",
    "STRLEN a",
    "SETRANGE fresh 3 abc",
    "GET fresh",
    "SETRANGE empty 0 \"\"",
    "EXISTS empty",
    "SETRANGE empty 10 \"\"",
    "EXISTS empty",
    "SETRANGE a 0 \"\"",
    "SETRANGE a -1 x",
    "SETRANGE a x x",
    "SETRANGE a 1000 x",
    "STRLEN a",
    "SETRANGE a 536870912 x",
    "SETRANGE a 536870912 \"\"",
    "SETRANGE n 0 9",
    "GET n",
    "INCR n",
    "SETRANGE a 0",
];

const LCS: &[&str] = &[
    "MSET key1 ohmytext key2 mynewtext",
    "LCS key1 key2",
    "LCS key1 key2 LEN",
    "LCS key1 key2 IDX",
    "LCS key1 key2 IDX MINMATCHLEN 4",
    "LCS key1 key2 IDX MINMATCHLEN 4 WITHMATCHLEN",
    "LCS key1 key2 IDX WITHMATCHLEN",
    "LCS key1 key2 LEN IDX",
    "LCS key1 key2 MINMATCHLEN",
    "LCS key1 key2 MINMATCHLEN x",
    "LCS key1 key2 MINMATCHLEN -1 IDX",
    "LCS key1 key2 BOGUS",
    "LCS key1 missing",
    "LCS missing1 missing2",
    "LCS missing1 missing2 IDX",
    "LCS key1 missing LEN",
    "LCS key1",
    "MSET a ABCBDAB b BDCABA",
    "LCS a b",
    "LCS a b IDX WITHMATCHLEN",
    "LCS b a IDX",
];

const SELECT: &[&str] = &[
    "SET k db0",
    "SELECT 1",
    "GET k",
    "SET k db1",
    "SELECT 15",
    "GET k",
    "SELECT 16",
    "SELECT -1",
    "SELECT abc",
    "SELECT 1.5",
    "SELECT 99999999999999999999",
    "SELECT",
    "SELECT 1 2",
    "SELECT 0",
    "GET k",
    "SELECT 1",
    "GET k",
    // The selected database is per connection.
    "@2 GET k",
    "@2 SELECT 1",
    "@2 GET k",
];

const KEYS: &[&str] = &[
    "MSET a 1 b 2 c 3",
    "EXISTS a",
    "EXISTS a a missing b",
    "EXISTS missing",
    "EXISTS",
    "TYPE a",
    "TYPE missing",
    "TYPE",
    "DEL a a missing",
    "DEL a",
    "EXISTS a",
    "UNLINK b c missing",
    "DEL",
    "UNLINK",
    "DBSIZE",
    "RANDOMKEY",
    "SET only 1",
    "RANDOMKEY",
    "KEYS *",
    "KEYS o?ly",
    "KEYS [a-z]nly",
    "KEYS [^x]nly",
    "KEYS nomatch*",
    "KEYS \\*",
    "KEYS",
    "SET \"a*b\" 1",
    "KEYS a\\*b",
    "KEYS \"a[*]b\"",
    "DEL \"a*b\"",
    "SCAN 0",
    "SCAN 0 MATCH o*",
    "SCAN 0 MATCH x*",
    "SCAN 0 COUNT 100",
    "SCAN 0 TYPE string",
    "SCAN 0 TYPE list",
    "SCAN 0 TYPE nosuchtype",
    "SCAN 0 MATCH * COUNT 10 TYPE string",
    "SCAN 0 COUNT 0",
    "SCAN 0 COUNT -1",
    "SCAN 0 COUNT x",
    "SCAN 0 BOGUS",
    "SCAN 0 MATCH",
    "SCAN x",
    // Redis reads the cursor as unsigned (-1 is 2^64-1) and what it finds there depends on
    // its hash table's layout: only the reply's shape is comparable.
    "~ SCAN -1",
    "SCAN",
    "TOUCH only missing only",
    "TOUCH",
    "DBSIZE",
    "DBSIZE x",
];

const EXPIRE: &[&str] = &[
    "SET k v",
    "TTL k",
    "PTTL k",
    "EXPIRETIME k",
    "PEXPIRETIME k",
    "TTL missing",
    "PTTL missing",
    "EXPIRETIME missing",
    "PEXPIRETIME missing",
    "EXPIRE k 100",
    "TTL k",
    "~ PTTL k",
    "EXPIRE missing 100",
    "EXPIRE k 100 NX",
    "EXPIRE k 150 XX",
    "TTL k",
    "EXPIRE k 50 GT",
    "EXPIRE k 200 GT",
    "TTL k",
    "EXPIRE k 300 LT",
    "EXPIRE k 100 LT",
    "TTL k",
    "EXPIRE k 10 NX XX",
    "EXPIRE k 10 GT LT",
    "EXPIRE k 10 NX GT",
    "EXPIRE k 10 XX GT",
    "EXPIRE k 10 xx lt",
    "TTL k",
    "EXPIRE k 10 BOGUS",
    "EXPIRE k abc",
    "EXPIRE k 1.5",
    "EXPIRE k",
    "EXPIRE k 9223372036854775807",
    "PEXPIRE k 9223372036854775807",
    "EXPIREAT k 9223372036854775807",
    "EXPIRE k -9223372036854775808",
    "PEXPIRE k 9223372036854770000",
    "TTL k",
    // Persistent keys count as an infinite TTL for GT and LT.
    "SET p v",
    "EXPIRE p 100 GT",
    "TTL p",
    "EXPIRE p 100 XX",
    "TTL p",
    "EXPIRE p 100 LT",
    "TTL p",
    "PERSIST p",
    "PERSIST p",
    "PERSIST missing",
    "TTL p",
    "PERSIST",
    "PEXPIRE p 100000",
    "TTL p",
    "EXPIREAT p 4102444800",
    "EXPIRETIME p",
    "PEXPIRETIME p",
    "PEXPIREAT p 4102444800123",
    "EXPIRETIME p",
    "PEXPIRETIME p",
    "EXPIREAT p 4102444801 GT",
    "EXPIRETIME p",
    "EXPIREAT p 4102444700 GT",
    "PEXPIREAT p 4102444700000 LT",
    "EXPIRETIME p",
    // A time in the past deletes the key (and still answers 1).
    "EXPIRE p -1",
    "EXISTS p",
    "SET p v",
    "PEXPIRE p 0",
    "EXISTS p",
    "SET p v",
    "EXPIREAT p 1",
    "EXISTS p",
    "SET p v",
    "PEXPIREAT p 0",
    "GET p",
    "SET p v",
    "EXPIRE p 0 NX",
    "EXISTS p",
    "SET p v EX 100",
    "EXPIRE p -1 NX",
    "EXISTS p",
    // Overwriting a key clears its TTL; APPEND and SETRANGE keep it.
    "SET q v EX 100",
    "SET q w",
    "TTL q",
    "SET q v EX 100",
    "APPEND q x",
    "TTL q",
    "SETRANGE q 0 y",
    "TTL q",
    "GETSET q z",
    "TTL q",
];

const COPY_MOVE_RENAME: &[&str] = &[
    "SET a 1 EX 100",
    "RENAME a b",
    "EXISTS a",
    "GET b",
    "TTL b",
    "RENAME missing x",
    "RENAME b b",
    "RENAME missing missing",
    "RENAME b",
    "SET c 3",
    "RENAME b c",
    "GET c",
    "TTL c",
    "SET d 4",
    "RENAMENX c d",
    "RENAMENX c e",
    "GET e",
    "RENAMENX e e",
    "RENAMENX missing x",
    "COPY e f",
    "GET f",
    "TTL f",
    "COPY e f",
    "SET e 5",
    "COPY e f REPLACE",
    "GET f",
    "COPY e e",
    "COPY missing g",
    "COPY e g DB 1",
    "COPY e g DB 1",
    "COPY e g DB 1 REPLACE",
    "COPY e g DB 99",
    "COPY e g DB -1",
    "COPY e g DB x",
    "COPY e g DB",
    "COPY e g BOGUS",
    "COPY e e DB 1",
    "COPY e e DB 0",
    "COPY e",
    "SELECT 1",
    "GET g",
    "SELECT 0",
    "MOVE e 1",
    "MOVE e 1",
    "SET e again",
    "MOVE e 1",
    "MOVE g 1",
    "MOVE e 0",
    "MOVE e 99",
    "MOVE e -1",
    "MOVE e x",
    "MOVE missing 1",
    "MOVE e",
    "SET t v EX 100",
    "MOVE t 2",
    "SELECT 2",
    "TTL t",
];

const DATABASES: &[&str] = &[
    "SET a 0",
    "SELECT 1",
    "SET a 1",
    "SET b 1",
    "DBSIZE",
    "SWAPDB 0 1",
    "DBSIZE",
    "GET a",
    "SELECT 0",
    "GET a",
    "DBSIZE",
    "SWAPDB 0 0",
    "SWAPDB 0 16",
    "SWAPDB -1 0",
    "SWAPDB x 0",
    "SWAPDB 0 x",
    "SWAPDB 0",
    // Another connection in database 1 sees the swap.
    "@2 SELECT 1",
    "@2 GET a",
    "SWAPDB 1 0",
    "@2 GET a",
    "FLUSHDB",
    "DBSIZE",
    "@2 DBSIZE",
    "FLUSHDB BOGUS",
    "FLUSHDB SYNC",
    "FLUSHDB ASYNC",
    "FLUSHDB sync async",
    "SET a 1",
    "FLUSHALL",
    "DBSIZE",
    "@2 DBSIZE",
    "FLUSHALL ASYNC",
    "FLUSHALL SYNC",
    "FLUSHALL BOGUS",
    "FLUSHALL SYNC ASYNC",
];

const OBJECT: &[&str] = &[
    "SET int 12345",
    "SET neg -1",
    "SET big 9223372036854775807",
    "SET toobig 9223372036854775808",
    "SET lead 012",
    "SET short hello",
    "SET long 0123456789012345678901234567890123456789abcd",
    "SET longer 0123456789012345678901234567890123456789abcde",
    "SET app x",
    "APPEND app y",
    "SET f 1.5",
    "INCRBYFLOAT f 1",
    "OBJECT ENCODING int",
    "OBJECT ENCODING neg",
    "OBJECT ENCODING big",
    "OBJECT ENCODING toobig",
    "OBJECT ENCODING lead",
    "OBJECT ENCODING short",
    "OBJECT ENCODING long",
    "OBJECT ENCODING longer",
    // Known difference: Redis reports "raw" after APPEND or SETRANGE (they unshare the value
    // into a raw string) where Relis, which derives the encoding from the value, says "embstr"
    // for a short one. `OBJECT ENCODING app` is left out until the engine remembers that.
    "OBJECT ENCODING f",
    "OBJECT ENCODING missing",
    "OBJECT FREQ int",
    "OBJECT FREQ missing",
    "OBJECT BOGUS int",
    "OBJECT ENCODING",
    "OBJECT ENCODING a b",
    "OBJECT",
    "OBJECT HELP",
    "OBJECT help",
    "OBJECT REFCOUNT missing",
    "OBJECT IDLETIME missing",
];

const CONNECTION: &[&str] = &[
    "CLIENT GETNAME",
    "CLIENT SETNAME conn-1",
    "CLIENT GETNAME",
    "@2 CLIENT GETNAME",
    "CLIENT SETNAME \"a b\"",
    "CLIENT SETNAME \"a\\nb\"",
    "CLIENT SETNAME \"\"",
    "CLIENT GETNAME",
    "CLIENT SETNAME",
    "CLIENT SETNAME a b",
    "CLIENT GETNAME x",
    "CLIENT NO-EVICT on",
    "CLIENT NO-EVICT off",
    "CLIENT NO-EVICT maybe",
    "CLIENT REPLY ON",
    "CLIENT REPLY x",
    "CLIENT BOGUS",
    "CLIENT",
    "CLIENT KILL 127.0.0.1:1",
    "CLIENT KILL ID 999999",
    "CLIENT KILL ID x",
    "CLIENT KILL BOGUS x",
    "CLIENT KILL ADDR 127.0.0.1:1",
    "CLIENT KILL SKIPME maybe",
    "AUTH pass",
    "AUTH user pass",
    "AUTH default pass",
    "AUTH",
    "AUTH a b c",
    "HELLO 4",
    "HELLO 1",
    "HELLO abc",
    "HELLO 3 AUTH default",
    "HELLO 3 BOGUS",
    // Without requirepass the default user takes any password; the reply names the client id.
    "~ HELLO 3 AUTH default wrong",
    "HELLO 3 AUTH someone wrong",
    "~ HELLO",
    "~ HELLO 2 SETNAME hello-name",
    "CLIENT GETNAME",
    "HELLO 2 SETNAME \"bad name\"",
    "SELECT 3",
    "SET k v",
    "MULTI",
    "CLIENT SETNAME reset-me",
    "RESET",
    "CLIENT GETNAME",
    "GET k",
    "EXEC",
    "RESET x",
    "QUIT x",
];

const SERVER: &[&str] = &[
    "CONFIG GET databases",
    "CONFIG GET DATABASES",
    "CONFIG GET timeout",
    "CONFIG GET tcp-keepalive",
    "CONFIG GET save",
    "CONFIG GET appendonly",
    "CONFIG GET requirepass",
    "CONFIG GET proto-max-bulk-len",
    "CONFIG GET nosuchparam",
    "CONFIG GET nosuch*",
    "CONFIG GET",
    "CONFIG SET timeout 30",
    "CONFIG GET timeout",
    "CONFIG SET timeout abc",
    "CONFIG SET timeout",
    "CONFIG SET nosuchparam 1",
    "CONFIG SET databases 4",
    "CONFIG SET timeout 0",
    "CONFIG BOGUS",
    "CONFIG",
    "CONFIG RESETSTAT",
    "CONFIG RESETSTAT x",
    "CONFIG REWRITE",
    "COMMAND INFO get",
    "COMMAND INFO GET set",
    "COMMAND INFO nosuchcommand",
    "COMMAND GETKEYS SET a b",
    "COMMAND GETKEYS MSET a 1 b 2",
    "COMMAND GETKEYS GET",
    "COMMAND GETKEYS PING",
    "COMMAND GETKEYS nosuch a",
    "COMMAND GETKEYS",
    "COMMAND BOGUS",
    "DBSIZE",
    "SAVE",
    "SAVE x",
    "LASTSAVE x",
    "TIME x",
];

const MULTI_EXEC: &[&str] = &[
    "MULTI",
    "SET a 1",
    "GET a",
    "SET a 2 BOGUS",
    "GET a",
    "EXEC",
    "GET a",
    // Queue-time errors abort EXEC.
    "MULTI",
    "SET a 3",
    "GET",
    "NOSUCHCOMMAND x",
    "EXEC",
    "GET a",
    // Nesting, DISCARD, EXEC/DISCARD outside MULTI.
    "MULTI",
    "MULTI",
    "SET a 4",
    "DISCARD",
    "GET a",
    "EXEC",
    "DISCARD",
    "MULTI x",
    // A rejected EXEC reports EXECABORT, in MULTI or not, and discards the transaction.
    "EXEC x",
    "DISCARD x",
    "MULTI",
    "SET a 5",
    "EXEC x",
    "EXEC",
    "GET a",
    // An empty transaction.
    "MULTI",
    "EXEC",
    // SELECT inside MULTI applies to the commands after it.
    "MULTI",
    "SELECT 2",
    "SET in2 yes",
    "SELECT 0",
    "GET in2",
    "EXEC",
    "SELECT 2",
    "GET in2",
    "SELECT 0",
    // Commands inside MULTI are not seen by other clients until EXEC.
    "MULTI",
    "SET iso 1",
    "@2 GET iso",
    "EXEC",
    "@2 GET iso",
    // Arity errors inside MULTI.
    "MULTI",
    "SET x",
    "EXEC",
    "MULTI",
    "SELECT x",
    "SELECT 99",
    "EXEC",
];

const WATCH: &[&str] = &[
    "SET k 1",
    "WATCH k missing",
    "@2 SET k 2",
    "MULTI",
    "SET k 3",
    "EXEC",
    "GET k",
    "WATCH k",
    "MULTI",
    "WATCH k",
    "SET k 4",
    "EXEC",
    "GET k",
    // A watched key that another client creates.
    "WATCH created",
    "@2 SET created x",
    "MULTI",
    "GET created",
    "EXEC",
    // UNWATCH forgets.
    "WATCH k",
    "UNWATCH",
    "@2 SET k 5",
    "MULTI",
    "GET k",
    "EXEC",
    // Writing the same value still counts as a change.
    "WATCH k",
    "@2 SET k 5",
    "MULTI",
    "GET k",
    "EXEC",
    // A write by the watching client itself also aborts.
    "WATCH k",
    "SET k 6",
    "MULTI",
    "GET k",
    "EXEC",
    // DISCARD forgets too.
    "WATCH k",
    "MULTI",
    "DISCARD",
    "@2 SET k 7",
    "MULTI",
    "GET k",
    "EXEC",
    // Keys in another database are different keys.
    "WATCH k",
    "@2 SELECT 1",
    "@2 SET k other-db",
    "MULTI",
    "GET k",
    "EXEC",
    "WATCH",
    "UNWATCH x",
];

const ERRORS: &[&str] = &[
    "NOSUCHCOMMAND",
    "nosuchcommand a b c",
    "\"\"",
    "\"\" a",
    "\"ge t\" k",
    "GETT k",
    "GET\\x00 k",
];

/// A command line split like redis-cli (sdssplitargs): quotes, `\xHH` and C escapes.
fn split(line: &str) -> Vec<Vec<u8>> {
    let b = line.as_bytes();
    let mut out = Vec::new();
    let mut i = 0;
    loop {
        while i < b.len() && b[i].is_ascii_whitespace() {
            i += 1;
        }
        if i == b.len() {
            return out;
        }
        let mut arg = Vec::new();
        match b[i] {
            q @ (b'"' | b'\'') => {
                i += 1;
                while b[i] != q {
                    if b[i] == b'\\' && q == b'"' {
                        i += 1;
                        match b[i] {
                            b'x' => {
                                let hex = std::str::from_utf8(&b[i + 1..i + 3]).unwrap();
                                arg.push(u8::from_str_radix(hex, 16).unwrap());
                                i += 2;
                            }
                            b'n' => arg.push(b'\n'),
                            b'r' => arg.push(b'\r'),
                            b't' => arg.push(b'\t'),
                            c => arg.push(c),
                        }
                    } else if b[i] == b'\\' && b.get(i + 1) == Some(&b'\'') {
                        i += 1;
                        arg.push(b'\'');
                    } else {
                        arg.push(b[i]);
                    }
                    i += 1;
                }
                i += 1;
            }
            _ => {
                while i < b.len() && !b[i].is_ascii_whitespace() {
                    arg.push(b[i]);
                    i += 1;
                }
            }
        }
        out.push(arg);
    }
}

#[test]
fn split_handles_quotes_and_escapes() {
    assert_eq!(
        split(r#"SET "a b" 'c d' "\x00\r\n" 'it\'s'"#),
        vec![
            b"SET".to_vec(),
            b"a b".to_vec(),
            b"c d".to_vec(),
            b"\x00\r\n".to_vec(),
            b"it's".to_vec()
        ]
    );
    assert_eq!(split("  \"\"  "), vec![Vec::<u8>::new()]);
}

/// One server's side of a script run: its connections.
struct Side {
    conns: Vec<Raw>,
}

impl Side {
    async fn connect(addr: std::net::SocketAddr, resp3: bool) -> Side {
        let mut conns = Vec::new();
        for _ in 0..3 {
            let mut c = Raw::connect(addr).await;
            if resp3 {
                // HELLO's own reply names the server and the client id: not compared.
                let reply = c.cmd(&["HELLO", "3"]).await;
                assert!(
                    matches!(reply, resp::Frame::Map(_)),
                    "HELLO 3 on {addr}: {reply:?}"
                );
            }
            conns.push(c);
        }
        Side { conns }
    }

    async fn call(&mut self, conn: usize, argv: &[Vec<u8>]) -> Vec<u8> {
        let args: Vec<&[u8]> = argv.iter().map(|a| a.as_slice()).collect();
        let c = &mut self.conns[conn];
        c.send(&encode_command(&args)).await;
        c.read_raw().await.expect("a reply")
    }
}

/// A reply for a failure message: escaped, and cut short when long.
fn clip(b: &[u8]) -> String {
    let s = show(b);
    if s.len() > 400 {
        format!("{}... ({} bytes)", &s[..400], b.len())
    } else {
        s
    }
}

/// Runs every script against a fresh redis-server and a fresh Relis, under RESP2 or RESP3.
async fn run_scripts(resp3: bool) {
    let tmp = tempfile::tempdir().expect("temp dir");
    let Some(_probe) = redis_server() else {
        eprintln!("redis-server is not installed: skipping the differential tests");
        return;
    };
    let proto = if resp3 { "resp3" } else { "resp2" };
    let mut failures = Vec::new();
    for (name, lines) in SCRIPTS {
        let redis = spawn_redis(tmp.path()).expect("redis-server");
        let relis = start().await;
        let mut want = Side::connect(redis.addr(), resp3).await;
        let mut got = Side::connect(relis.addr, resp3).await;
        for (n, line) in lines.iter().enumerate() {
            let mut line = *line;
            if let Some(rest) = line.strip_prefix("!resp2 ") {
                if resp3 {
                    continue;
                }
                line = rest;
            }
            if let Some(rest) = line.strip_prefix("!resp3 ") {
                if !resp3 {
                    continue;
                }
                line = rest;
            }
            let shape_only = line.starts_with("~ ");
            let line = line.trim_start_matches("~ ");
            let (conn, line) = match line.strip_prefix('@') {
                Some(rest) => {
                    let (n, rest) = rest.split_once(' ').expect("@N command");
                    (n.parse::<usize>().expect("connection number") - 1, rest)
                }
                None => (0, line),
            };
            let argv = split(line);
            let w = want.call(conn, &argv).await;
            let g = got.call(conn, &argv).await;
            let same = if shape_only { w[0] == g[0] } else { w == g };
            if !same {
                failures.push(format!(
                    "{proto} script {name}, line {}: {line}\n   redis: {}\n   relis: {}",
                    n + 1,
                    clip(&w),
                    clip(&g)
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
