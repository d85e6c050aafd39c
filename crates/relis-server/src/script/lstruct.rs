//! The `struct` library (Roberto Ierusalimschy's struct, which Redis vendors):
//! `struct.pack(fmt, ...)`, `struct.unpack(fmt, s [, pos])`, `struct.size(fmt)`.
//!
//! Format: `<` little endian, `>` big endian, `=` native (little), `![n]` maximum alignment
//! (default none), `x` a padding byte, `b`/`B` signed/unsigned char, `h`/`H` short, `l`/`L`
//! long (8 bytes), `T` size_t (8), `i[n]`/`I[n]` int of n bytes (4 by default), `f` float,
//! `d` double, `s` zero-terminated string, `c[n]` n characters (`c0`: the whole string when
//! packing, the length given by the previous value when unpacking).

use super::engine::lua_error;
use mlua::{Lua, MultiValue, Table, Value};

struct Fmt<'a> {
    f: &'a [u8],
    i: usize,
    little: bool,
    align: usize,
}

enum Item {
    Pad,
    Int { size: usize, signed: bool },
    Float,
    Double,
    ZStr,
    Chars(usize),
}

impl Fmt<'_> {
    fn number(&mut self) -> Option<usize> {
        let start = self.i;
        while self.i < self.f.len() && self.f[self.i].is_ascii_digit() {
            self.i += 1;
        }
        std::str::from_utf8(&self.f[start..self.i])
            .ok()?
            .parse()
            .ok()
    }

    /// The next item and its size, after any option characters.
    fn next(&mut self, lua: &Lua) -> mlua::Result<Option<(Item, usize)>> {
        while self.i < self.f.len() {
            let c = self.f[self.i];
            self.i += 1;
            let item = match c {
                b' ' => continue,
                b'<' | b'=' => {
                    self.little = true;
                    continue;
                }
                b'>' => {
                    self.little = false;
                    continue;
                }
                b'!' => {
                    self.align = self.number().unwrap_or(8);
                    continue;
                }
                b'x' => (Item::Pad, 1),
                b'b' => (
                    Item::Int {
                        size: 1,
                        signed: true,
                    },
                    1,
                ),
                b'B' => (
                    Item::Int {
                        size: 1,
                        signed: false,
                    },
                    1,
                ),
                b'h' => (
                    Item::Int {
                        size: 2,
                        signed: true,
                    },
                    2,
                ),
                b'H' => (
                    Item::Int {
                        size: 2,
                        signed: false,
                    },
                    2,
                ),
                b'l' => (
                    Item::Int {
                        size: 8,
                        signed: true,
                    },
                    8,
                ),
                b'L' | b'T' => (
                    Item::Int {
                        size: 8,
                        signed: false,
                    },
                    8,
                ),
                b'i' | b'I' => {
                    let n = self.number().unwrap_or(4);
                    if n == 0 || n > 8 {
                        return Err(lua_error(
                            lua,
                            &format!("integral size {n} is larger than limit of 8"),
                        ));
                    }
                    (
                        Item::Int {
                            size: n,
                            signed: c == b'i',
                        },
                        n,
                    )
                }
                b'f' => (Item::Float, 4),
                b'd' => (Item::Double, 8),
                b's' => (Item::ZStr, 0),
                b'c' => {
                    let n = self.number().unwrap_or(1);
                    (Item::Chars(n), n)
                }
                other => {
                    return Err(lua_error(
                        lua,
                        &format!("invalid format option '{}'", other as char),
                    ))
                }
            };
            return Ok(Some(item));
        }
        Ok(None)
    }

    /// Padding needed before an item of `size` at `pos`.
    fn pad(&self, item: &Item, size: usize, pos: usize) -> usize {
        let a = match item {
            Item::Int { .. } | Item::Float | Item::Double => size.min(self.align),
            _ => 1,
        };
        if a <= 1 {
            0
        } else {
            (a - pos % a) % a
        }
    }
}

fn fmt(f: &[u8]) -> Fmt<'_> {
    Fmt {
        f,
        i: 0,
        little: true,
        align: 1,
    }
}

fn num(lua: &Lua, v: Option<&Value>, pos: usize) -> mlua::Result<f64> {
    match v {
        Some(Value::Integer(n)) => Ok(*n as f64),
        Some(Value::Number(n)) => Ok(*n),
        Some(Value::String(s)) => s
            .to_str()
            .ok()
            .and_then(|s| s.trim().parse().ok())
            .ok_or_else(|| bad(lua, pos, "number", v)),
        _ => Err(bad(lua, pos, "number", v)),
    }
}

fn bad(lua: &Lua, pos: usize, want: &str, v: Option<&Value>) -> mlua::Error {
    let got = v.map_or("no value", |v| v.type_name());
    lua_error(
        lua,
        &format!("bad argument #{pos} to '?' ({want} expected, got {got})"),
    )
}

/// Builds the `struct` table.
///
/// # Errors
/// Lua memory errors.
pub fn library(lua: &Lua) -> mlua::Result<Table> {
    let t = lua.create_table()?;
    t.raw_set(
        "pack",
        lua.create_function(|lua, args: MultiValue| {
            let Some(Value::String(f)) = args.front() else {
                return Err(bad(lua, 1, "string", args.front()));
            };
            let f = f.as_bytes().to_vec();
            let mut fm = fmt(&f);
            let mut out: Vec<u8> = Vec::new();
            let mut arg = 1;
            while let Some((item, size)) = fm.next(lua)? {
                out.resize(out.len() + fm.pad(&item, size, out.len()), 0);
                match item {
                    Item::Pad => out.push(0),
                    Item::Int { size, .. } => {
                        arg += 1;
                        let n = num(lua, args.get(arg - 1), arg)? as i64 as u64;
                        let bytes = n.to_le_bytes();
                        let mut b = bytes[..size].to_vec();
                        if !fm.little {
                            b.reverse();
                        }
                        out.extend_from_slice(&b);
                    }
                    Item::Float | Item::Double => {
                        arg += 1;
                        let n = num(lua, args.get(arg - 1), arg)?;
                        let mut b = if matches!(item, Item::Float) {
                            (n as f32).to_le_bytes().to_vec()
                        } else {
                            n.to_le_bytes().to_vec()
                        };
                        if !fm.little {
                            b.reverse();
                        }
                        out.extend_from_slice(&b);
                    }
                    Item::ZStr | Item::Chars(_) => {
                        arg += 1;
                        let s = match args.get(arg - 1) {
                            Some(Value::String(s)) => s.as_bytes().to_vec(),
                            Some(Value::Integer(n)) => n.to_string().into_bytes(),
                            Some(Value::Number(n)) => resp::format_double(*n).into_bytes(),
                            v => return Err(bad(lua, arg, "string", v)),
                        };
                        match item {
                            Item::ZStr => {
                                out.extend_from_slice(&s);
                                out.push(0);
                            }
                            Item::Chars(0) => out.extend_from_slice(&s),
                            Item::Chars(n) => {
                                if s.len() < n {
                                    return Err(lua_error(
                                        lua,
                                        &format!(
                                            "bad argument #{arg} to 'pack' (string too short)"
                                        ),
                                    ));
                                }
                                out.extend_from_slice(&s[..n]);
                            }
                            _ => {}
                        }
                    }
                }
            }
            Ok(mlua::BString::from(out))
        })?,
    )?;
    t.raw_set(
        "unpack",
        lua.create_function(
            |lua, (f, data, init): (mlua::String, mlua::String, Option<i64>)| {
                let f = f.as_bytes().to_vec();
                let data = data.as_bytes().to_vec();
                let mut pos = (init.unwrap_or(1).max(1) - 1) as usize;
                let mut fm = fmt(&f);
                let mut out = MultiValue::new();
                let short = |lua: &Lua| {
                    lua_error(lua, "bad argument #2 to 'unpack' (data string too short)")
                };
                let mut last: Option<f64> = None;
                while let Some((item, size)) = fm.next(lua)? {
                    pos += fm.pad(&item, size, pos);
                    match item {
                        Item::Pad => pos += 1,
                        Item::Int { size, signed } => {
                            let b = data.get(pos..pos + size).ok_or_else(|| short(lua))?;
                            let mut le = b.to_vec();
                            if !fm.little {
                                le.reverse();
                            }
                            let mut v: u64 = 0;
                            for (i, byte) in le.iter().enumerate() {
                                v |= u64::from(*byte) << (8 * i);
                            }
                            let n = if signed && size < 8 && v & (1 << (8 * size - 1)) != 0 {
                                (v | (!0u64 << (8 * size))) as i64 as f64
                            } else if signed {
                                v as i64 as f64
                            } else {
                                v as f64
                            };
                            last = Some(n);
                            out.push_back(Value::Number(n));
                            pos += size;
                        }
                        Item::Float | Item::Double => {
                            let b = data.get(pos..pos + size).ok_or_else(|| short(lua))?;
                            let mut le = b.to_vec();
                            if !fm.little {
                                le.reverse();
                            }
                            let n = if size == 4 {
                                f64::from(f32::from_le_bytes([le[0], le[1], le[2], le[3]]))
                            } else {
                                let mut a = [0u8; 8];
                                a.copy_from_slice(&le);
                                f64::from_le_bytes(a)
                            };
                            last = Some(n);
                            out.push_back(Value::Number(n));
                            pos += size;
                        }
                        Item::ZStr => {
                            let rest = data.get(pos..).ok_or_else(|| short(lua))?;
                            let end = rest
                                .iter()
                                .position(|&c| c == 0)
                                .ok_or_else(|| lua_error(lua, "unfinished string in data"))?;
                            out.push_back(Value::String(lua.create_string(&rest[..end])?));
                            pos += end + 1;
                        }
                        Item::Chars(n) => {
                            let n = if n == 0 {
                                last.ok_or_else(|| {
                                    lua_error(lua, "format 'c0' needs a previous size")
                                })? as usize
                            } else {
                                n
                            };
                            let b = data.get(pos..pos + n).ok_or_else(|| short(lua))?;
                            out.push_back(Value::String(lua.create_string(b)?));
                            pos += n;
                        }
                    }
                }
                out.push_back(Value::Number((pos + 1) as f64));
                Ok(out)
            },
        )?,
    )?;
    t.raw_set(
        "size",
        lua.create_function(|lua, f: mlua::String| {
            let f = f.as_bytes().to_vec();
            let mut fm = fmt(&f);
            let mut pos = 0usize;
            while let Some((item, size)) = fm.next(lua)? {
                let unsized_opt = match item {
                    Item::ZStr => Some("s"),
                    Item::Chars(0) => Some("c0"),
                    _ => None,
                };
                if let Some(o) = unsized_opt {
                    return Err(lua_error(
                        lua,
                        &format!("bad argument #1 to 'size' (option '{o}' has no fixed size)"),
                    ));
                }
                pos += fm.pad(&item, size, pos) + size;
            }
            Ok(pos as f64)
        })?,
    )?;
    Ok(t)
}
