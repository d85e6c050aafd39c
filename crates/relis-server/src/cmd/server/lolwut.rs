//! LOLWUT [VERSION version] [arguments ...] — computer art and the Redis version.
//! <https://redis.io/commands/lolwut/>
//!
//! Redis 7.0's LOLWUT, reproduced: without VERSION (or for a version other than 5 and 6) the
//! text `Redis ver. 7.0.15`; VERSION 5 draws Georg Nees's "Schotter" (`[columns]
//! [squares-per-row] [squares-per-col]`, braille characters), VERSION 6 a skyline of
//! skyscrapers (`[columns] [rows]`, terminal colours). Both use Redis's own algorithms with the
//! same single-precision arithmetic and the same random generator (glibc's `rand()`, seeded as
//! Redis seeds it, with the time and the process id), so a drawing whose arguments leave no room
//! for chance (VERSION 5 with one or two rows of squares) is byte for byte Redis's, and the
//! others are drawings Redis could have made.

use crate::args::Args;
use crate::cmd::{Cx, Parsed, ReadCmd, Spec};
use crate::error::CmdError;
use bytes::Bytes;
use resp::Frame;
use std::f64::consts::PI;
use std::sync::Mutex;

/// LOLWUT's declaration.
pub const SPEC: Spec = Spec {
    name: "lolwut",
    arity: -1,
    flags: Spec::flags(&["readonly", "fast"]),
    acl: Spec::acl(&["read", "fast"]),
    group: "server",
    since: "5.0.0",
    summary: "Display some computer art and the Redis version",
    complexity: "",
    parse: Lolwut::parse,
    ..Spec::BASE
};

/// Which drawing, with its arguments (Redis's defaults and limits applied).
#[derive(Debug, PartialEq)]
pub enum Lolwut {
    /// The version line only.
    Version,
    /// LOLWUT 5: columns, squares per row, squares per column.
    Schotter(i32, i32, i32),
    /// LOLWUT 6: columns, rows.
    Skyline(i32, i32),
}

impl Lolwut {
    fn parse(args: &mut Args) -> Result<Parsed, CmdError> {
        Parsed::read(Self::parse_args(args.rest())?)
    }

    /// Redis's `lolwutCommand`: VERSION picks the drawing by the version's text, `<v>.0.0`
    /// with `v` cast to a C `unsigned int`; the drawing then reads its own arguments.
    fn parse_args(argv: Vec<Bytes>) -> Result<Lolwut, CmdError> {
        let (version, rest) = if argv.len() >= 2 && argv[0].eq_ignore_ascii_case(b"version") {
            let v = relis::parse_i64(&argv[1]).ok_or(CmdError::NotInteger)?;
            (format!("{}.0.0", v as u32), &argv[2..])
        } else {
            (crate::REDIS_VERSION.to_string(), &argv[..])
        };
        let v = version.as_bytes();
        let (major, dot, minor) = (v[0], v.get(1) == Some(&b'.'), v.get(2).copied());
        let long = |i: usize, default: i64, max: i64| -> Result<i32, CmdError> {
            let n = match rest.get(i) {
                Some(a) => relis::parse_i64(a).ok_or(CmdError::NotInteger)?,
                None => default,
            };
            Ok(n.clamp(1, max) as i32)
        };
        Ok(
            if dot
                && ((major == b'5' && minor != Some(b'9'))
                    || (major == b'4' && minor == Some(b'9')))
            {
                Lolwut::Schotter(long(0, 66, 1000)?, long(1, 8, 200)?, long(2, 12, 200)?)
            } else if dot
                && ((major == b'6' && minor != Some(b'9'))
                    || (major == b'5' && minor == Some(b'9')))
            {
                Lolwut::Skyline(long(0, 80, 1000)?, long(1, 20, 1000)?)
            } else {
                Lolwut::Version
            },
        )
    }

    /// The text the command answers.
    pub fn render(&self, rng: &mut Rand) -> String {
        let ver = crate::REDIS_VERSION;
        match *self {
            Lolwut::Version => format!("Redis ver. {ver}\n"),
            Lolwut::Schotter(cols, per_row, per_col) => {
                let canvas = schotter(cols, per_row, per_col, rng);
                format!(
                    "{}\nGeorg Nees - schotter, plotter on paper, 1968. Redis ver. {ver}\n",
                    render_braille(&canvas)
                )
            }
            Lolwut::Skyline(cols, rows) => {
                let mut canvas = Canvas::new(cols, rows, 3);
                skyline(&mut canvas, rng);
                format!(
                    "{}\nDedicated to the 8 bit game developers of past and present.\n\
                     Original 8 bit image from Plaguemon by hikikomori. Redis ver. {ver}\n",
                    render_colors(&canvas)
                )
            }
        }
    }
}

impl ReadCmd for Lolwut {
    fn exec(&self, _r: &relis::Reader<'_>, _cx: &Cx) -> Result<Frame, CmdError> {
        // One generator for the process, as Redis's `rand()` is.
        static RAND: Mutex<Option<Rand>> = Mutex::new(None);
        let text = {
            let mut rng = RAND.lock().unwrap_or_else(|e| e.into_inner());
            self.render(rng.get_or_insert_with(Rand::seeded_as_redis))
        };
        Ok(Frame::Verbatim {
            format: *b"txt",
            data: Bytes::from(text),
        })
    }
}

/// glibc's `rand()` (the TYPE_3 additive feedback generator behind `srand`/`rand`), which
/// Redis's drawings draw from.
pub struct Rand {
    r: [u32; 34],
    i: usize,
}

impl Rand {
    /// `srand(seed)`.
    pub fn new(seed: u32) -> Rand {
        let mut r = [0u32; 34];
        let mut init = [0i32; 344];
        init[0] = if seed == 0 { 1 } else { seed as i32 };
        for i in 1..31 {
            // 16807 * r mod (2^31 - 1), by Schrage's method as glibc computes it.
            let prev = i64::from(init[i - 1]);
            let mut word = 16807 * (prev % 127773) - 2836 * (prev / 127773);
            if word < 0 {
                word += 2147483647;
            }
            init[i] = word as i32;
        }
        for i in 31..34 {
            init[i] = init[i - 31];
        }
        for i in 34..344 {
            init[i] = init[i - 31].wrapping_add(init[i - 3]);
        }
        // The last 34 words carry the state on.
        for (k, w) in r.iter_mut().enumerate() {
            *w = init[310 + k] as u32;
        }
        Rand { r, i: 0 }
    }

    /// Seeded as Redis's `main` seeds it: `srand(time(NULL) ^ getpid())`.
    pub fn seeded_as_redis() -> Rand {
        let now = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map(|d| d.as_secs())
            .unwrap_or(0);
        Rand::new((now as u32) ^ std::process::id())
    }

    /// `rand()`: 0 ..= RAND_MAX (2^31 - 1).
    pub fn rand(&mut self) -> i32 {
        // r[n] = r[n-31] + r[n-3] over a ring of the last 34 words.
        let n = self.i;
        let v = self.r[(n + 34 - 31) % 34].wrapping_add(self.r[(n + 34 - 3) % 34]);
        self.r[n] = v;
        self.i = (n + 1) % 34;
        (v >> 1) as i32
    }
}

/// C's `RAND_MAX`.
const RAND_MAX: i32 = i32::MAX;

/// Redis's `lwCanvas`: one byte of colour per pixel.
struct Canvas {
    width: i32,
    height: i32,
    pixels: Vec<u8>,
}

impl Canvas {
    fn new(width: i32, height: i32, bg: u8) -> Canvas {
        Canvas {
            width,
            height,
            pixels: vec![bg; (width as usize) * (height.max(0) as usize)],
        }
    }

    fn draw(&mut self, x: i32, y: i32, color: u8) {
        if x >= 0 && x < self.width && y >= 0 && y < self.height {
            self.pixels[(x + y * self.width) as usize] = color;
        }
    }

    fn get(&self, x: i32, y: i32) -> u8 {
        if x >= 0 && x < self.width && y >= 0 && y < self.height {
            self.pixels[(x + y * self.width) as usize]
        } else {
            0
        }
    }

    /// Bresenham's line, as `lwDrawLine`.
    fn line(&mut self, mut x1: i32, mut y1: i32, x2: i32, y2: i32, color: u8) {
        let (dx, dy) = ((x2 - x1).abs(), (y2 - y1).abs());
        let (sx, sy) = (if x1 < x2 { 1 } else { -1 }, if y1 < y2 { 1 } else { -1 });
        let mut err = dx - dy;
        loop {
            self.draw(x1, y1, color);
            if x1 == x2 && y1 == y2 {
                break;
            }
            let e2 = err * 2;
            if e2 > -dy {
                err -= dy;
                x1 += sx;
            }
            if e2 < dx {
                err += dx;
                y1 += sy;
            }
        }
    }

    /// A square centred on x,y, as `lwDrawSquare`: the C code's float and double steps kept.
    fn square(&mut self, x: i32, y: i32, size: f32, angle: f32, color: u8) {
        // Redis's own truncated square root of 2 (std's SQRT_2 would move some pixels).
        #[allow(clippy::approx_constant)]
        let size = (f64::from(size) / 1.4142135623) as f32;
        let size = f64::from(size).round() as f32;
        let mut k = (PI / 4.0 + f64::from(angle)) as f32;
        let (mut px, mut py) = ([0i32; 4], [0i32; 4]);
        for j in 0..4 {
            px[j] = (f64::from(k).sin() * f64::from(size) + f64::from(x)).round() as i32;
            py[j] = (f64::from(k).cos() * f64::from(size) + f64::from(y)).round() as i32;
            k = (f64::from(k) + PI / 2.0) as f32;
        }
        for j in 0..4 {
            self.line(px[j], py[j], px[(j + 1) % 4], py[(j + 1) % 4], color);
        }
    }
}

/// `lwDrawSchotter`: rows of squares, rotated and shifted more and more at random from the
/// third row down.
fn schotter(console_cols: i32, per_row: i32, per_col: i32, rng: &mut Rand) -> Canvas {
    let width = console_cols * 2;
    let padding = if width > 4 { 2 } else { 0 };
    let side = (width - padding * 2) as f32 / per_row as f32;
    let height = (side * per_col as f32 + (padding * 2) as f32) as i32;
    let mut canvas = Canvas::new(width, height, 0);
    let unit =
        |rng: &mut Rand, y: i32| rng.rand() as f32 / RAND_MAX as f32 / per_col as f32 * y as f32;
    for y in 0..per_col {
        for x in 0..per_row {
            let mut sx = (x as f32 * side + side / 2.0 + padding as f32) as i32;
            let mut sy = (y as f32 * side + side / 2.0 + padding as f32) as i32;
            let mut angle = 0.0f32;
            if y > 1 {
                let mut r1 = unit(rng, y);
                let mut r2 = unit(rng, y);
                let mut r3 = unit(rng, y);
                if rng.rand() % 2 != 0 {
                    r1 = -r1;
                }
                if rng.rand() % 2 != 0 {
                    r2 = -r2;
                }
                if rng.rand() % 2 != 0 {
                    r3 = -r3;
                }
                angle = r1;
                sx = (sx as f32 + r2 * side / 3.0) as i32;
                sy = (sy as f32 + r3 * side / 3.0) as i32;
            }
            canvas.square(sx, sy, side, angle, 1);
        }
    }
    canvas
}

/// LOLWUT 5's rendering: each 2x4 block of pixels is one braille character.
fn render_braille(c: &Canvas) -> String {
    let mut text = String::new();
    for y in (0..c.height).step_by(4) {
        for x in (0..c.width).step_by(2) {
            let bits = [
                (x, y),
                (x, y + 1),
                (x, y + 2),
                (x + 1, y),
                (x + 1, y + 1),
                (x + 1, y + 2),
                (x, y + 3),
                (x + 1, y + 3),
            ];
            let byte = bits
                .iter()
                .enumerate()
                .filter(|(_, &(px, py))| c.get(px, py) != 0)
                .fold(0u32, |b, (i, _)| b | 1 << i);
            text.push(char::from_u32(0x2800 + byte).unwrap_or(' '));
        }
        if y != c.height - 1 {
            text.push('\n');
        }
    }
    text
}

/// One skyscraper, as `generateSkyscraper`: windows (two pixels wide, one tall) in random
/// grays on the foreground ones.
struct Skyscraper {
    xoff: i32,
    width: i32,
    height: i32,
    windows: bool,
    color: u8,
}

fn skyscraper(c: &mut Canvas, s: &Skyscraper, rng: &mut Rand) {
    let starty = c.height - 1;
    let endy = starty - s.height + 1;
    for y in (endy..=starty).rev() {
        for x in s.xoff..s.xoff + s.width {
            // The roof is four pixels narrower.
            if y == endy && (x <= s.xoff + 1 || x >= s.xoff + s.width - 2) {
                continue;
            }
            let mut color = s.color;
            if s.windows
                && x > s.xoff + 1
                && x < s.xoff + s.width - 2
                && y > endy + 1
                && y < starty - 1
            {
                let relx = x - (s.xoff + 1);
                let rely = y - (endy + 1);
                if (relx / 2) % 2 != 0 && rely % 2 != 0 {
                    loop {
                        color = (1 + rng.rand() % 2) as u8;
                        if color != s.color {
                            break;
                        }
                    }
                    if relx % 2 != 0 {
                        color = c.get(x - 1, y);
                    }
                }
            }
            c.draw(x, y, color);
        }
    }
}

/// `generateSkyline`: two rows of background skyscrapers, lighter behind, then the foreground
/// with windows.
fn skyline(c: &mut Canvas, rng: &mut Rand) {
    let h = c.height;
    for color in [2u8, 1] {
        let mut offset = -10;
        while offset < c.width {
            offset += rng.rand() % 8;
            let xoff = offset;
            let width = 10 + rng.rand() % 9;
            let height = if color == 2 {
                h / 2 + (rng.rand() % h) / 2
            } else {
                h / 2 + (rng.rand() % h) / 3
            };
            let s = Skyscraper {
                xoff,
                width,
                height,
                windows: false,
                color,
            };
            skyscraper(c, &s, rng);
            offset += if color == 2 { width / 2 } else { width + 1 };
        }
    }
    let mut offset = -10;
    while offset < c.width {
        offset += rng.rand() % 8;
        let xoff = offset;
        let mut width = 5 + rng.rand() % 14;
        if width % 4 != 0 {
            width += width % 3;
        }
        let height = h / 3 + (rng.rand() % h) / 2;
        let s = Skyscraper {
            xoff,
            width,
            height,
            windows: true,
            color: 0,
        };
        skyscraper(c, &s, rng);
        offset += width + 5;
    }
}

/// LOLWUT 6's rendering: each pixel a space in one of four terminal grays.
fn render_colors(c: &Canvas) -> String {
    let mut text = String::new();
    for y in 0..c.height {
        for x in 0..c.width {
            let ce = match c.get(x, y) {
                1 => "0;90;100m",
                2 => "0;37;47m",
                3 => "0;97;107m",
                _ => "0;30;40m",
            };
            text.push_str("\x1b[");
            text.push_str(ce);
            text.push_str(" \x1b[0m");
        }
        if y != c.height - 1 {
            text.push('\n');
        }
    }
    text
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rand_is_glibcs() {
        // glibc: srand(1); rand() x3.
        let mut r = Rand::new(1);
        assert_eq!(
            [r.rand(), r.rand(), r.rand()],
            [1804289383, 846930886, 1681692777]
        );
        // srand(0) is srand(1).
        assert_eq!(Rand::new(0).rand(), 1804289383);
    }

    #[test]
    fn versions_pick_the_drawing() {
        let p = |v: &[&str]| {
            Lolwut::parse_args(v.iter().map(|s| Bytes::from(s.to_string())).collect())
                .map_err(|e| e.message())
        };
        assert_eq!(p(&[]), Ok(Lolwut::Version));
        assert_eq!(p(&["5"]), Ok(Lolwut::Version));
        assert_eq!(p(&["version"]), Ok(Lolwut::Version));
        assert_eq!(p(&["VERSION", "5"]), Ok(Lolwut::Schotter(66, 8, 12)));
        assert_eq!(p(&["version", "6"]), Ok(Lolwut::Skyline(80, 20)));
        assert_eq!(p(&["version", "4294967302"]), Ok(Lolwut::Skyline(80, 20)));
        assert_eq!(p(&["version", "7"]), Ok(Lolwut::Version));
        assert_eq!(p(&["version", "-5"]), Ok(Lolwut::Version));
        assert_eq!(
            p(&["version", "5", "0", "9999", "-3"]),
            Ok(Lolwut::Schotter(1, 200, 1))
        );
        assert_eq!(
            p(&["version", "6", "5000", "0"]),
            Ok(Lolwut::Skyline(1000, 1))
        );
        let not_int = Err("ERR value is not an integer or out of range".to_string());
        assert_eq!(p(&["version", "x"]), not_int);
        assert_eq!(p(&["version", "5", "1", "x"]), not_int);
        assert_eq!(p(&["version", "6", "x"]), not_int);
    }
}
