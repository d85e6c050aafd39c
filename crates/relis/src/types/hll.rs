//! HyperLogLog over plain bytes, exactly as redis-server 7.0 lays it out (`hyperloglog.c`), so
//! an HLL value written by either server works in the other: the same header, the same sparse
//! and dense encodings, the same hash and the same estimator. No storage here: these functions
//! take and change the bytes of a string value; `hll_db.rs` reads and writes the key.
//!
//! The value is a 16-byte header followed by the registers:
//!
//! ```text
//! +------+---+-----+----------+
//! | HYLL | E | N/U | Cardin.  |   magic, encoding (0 dense, 1 sparse), 3 unused bytes,
//! +------+---+-----+----------+   the cached cardinality (little endian; the MSB of its last
//!                                 byte set means "stale")
//! ```
//!
//! Dense: 16384 registers of 6 bits each, least significant bits first. Sparse: a run-length
//! sequence of three opcodes, ZERO `00xxxxxx` (1..64 zero registers), XZERO `01xxxxxx yyyyyyyy`
//! (1..16384 zero registers) and VAL `1vvvvvxx` (1..4 registers of value 1..32), promoted to
//! dense when a value above 32 is needed or the value would grow past `hll-sparse-max-bytes`.
//!
//! A value read from a key is untrusted (SET or RESTORE can put any bytes there): every walk of
//! a sparse value is bounded by its length and by the 16384 registers, so a corrupted value gets
//! an error, never an out-of-bounds access (Redis's CVE-2025-32023 is a sum of XZERO runs that
//! overflows an `int`; here sums are `usize` and checked before any register is written).

/// Registers are addressed by this many bits of the hash.
pub const HLL_P: u32 = 14;
/// The rest of the 64-bit hash, where the run of zeros is counted.
pub const HLL_Q: u32 = 64 - HLL_P;
/// Number of registers.
pub const HLL_REGISTERS: usize = 1 << HLL_P;
/// Bits per dense register.
const HLL_BITS: usize = 6;
/// Largest register value.
const HLL_REGISTER_MAX: u8 = (1 << HLL_BITS) - 1;
/// Header length.
pub const HLL_HDR_SIZE: usize = 16;
/// Length of a dense value.
pub const HLL_DENSE_SIZE: usize = HLL_HDR_SIZE + (HLL_REGISTERS * HLL_BITS).div_ceil(8);
/// Encoding byte of a dense value.
const HLL_DENSE: u8 = 0;
/// Encoding byte of a sparse value.
const HLL_SPARSE: u8 = 1;
/// The seed Redis hashes elements with.
const HLL_SEED: u64 = 0xadc8_3b19;
/// Largest value a sparse VAL opcode holds.
const SPARSE_VAL_MAX_VALUE: u8 = 32;
/// Longest run of a VAL opcode.
const SPARSE_VAL_MAX_LEN: usize = 4;
/// Longest run of a ZERO opcode.
const SPARSE_ZERO_MAX_LEN: usize = 64;
/// Longest run of an XZERO opcode.
const SPARSE_XZERO_MAX_LEN: usize = 16384;
/// 0.5 / ln(2), the estimator's constant.
const HLL_ALPHA_INF: f64 = 0.721_347_520_444_481_7;

/// Why bytes are not a usable HyperLogLog.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum HllError {
    /// Not an HLL at all (too short, wrong magic, unknown encoding, a dense value of the wrong
    /// length): Redis's `WRONGTYPE Key is not a valid HyperLogLog string value.`
    NotHll,
    /// An HLL whose sparse registers do not add up: Redis's `INVALIDOBJ Corrupted HLL object
    /// detected`.
    Corrupted,
}

/// Redis's `MurmurHash64A` (Austin Appleby's 64-bit MurmurHash2 for 64-bit platforms, read as
/// little-endian words).
pub fn murmur64a(key: &[u8], seed: u64) -> u64 {
    const M: u64 = 0xc6a4_a793_5bd1_e995;
    const R: u32 = 47;
    // Redis passes the length as an `int`: the same bits for any length a string may have.
    let mut h = seed ^ (key.len() as u64).wrapping_mul(M);
    let mut chunks = key.chunks_exact(8);
    for c in &mut chunks {
        let mut k = u64::from_le_bytes(c.try_into().expect("8 bytes"));
        k = k.wrapping_mul(M);
        k ^= k >> R;
        k = k.wrapping_mul(M);
        h ^= k;
        h = h.wrapping_mul(M);
    }
    let tail = chunks.remainder();
    if !tail.is_empty() {
        for (i, &b) in tail.iter().enumerate() {
            h ^= u64::from(b) << (8 * i);
        }
        h = h.wrapping_mul(M);
    }
    h ^= h >> R;
    h = h.wrapping_mul(M);
    h ^= h >> R;
    h
}

/// The register an element goes to and the length of its run of zeros plus one
/// (Redis's `hllPatLen`).
pub fn pattern(ele: &[u8]) -> (usize, u8) {
    let hash = murmur64a(ele, HLL_SEED);
    let index = (hash as usize) & (HLL_REGISTERS - 1);
    // The bit set at Q bounds the count to Q + 1.
    let rest = (hash >> HLL_P) | (1u64 << HLL_Q);
    (index, rest.trailing_zeros() as u8 + 1)
}

/// A new, empty HLL as Redis creates it: sparse, one XZERO covering every register, the cached
/// cardinality 0 and valid.
pub fn new_hll() -> Vec<u8> {
    let mut v = Vec::with_capacity(HLL_HDR_SIZE + 2);
    v.extend_from_slice(b"HYLL");
    v.push(HLL_SPARSE);
    v.extend_from_slice(&[0; 11]);
    let mut left = HLL_REGISTERS;
    while left > 0 {
        let n = left.min(SPARSE_XZERO_MAX_LEN);
        push_xzero(&mut v, n);
        left -= n;
    }
    v
}

/// Redis's `isHLLObjectOrReply` on a string value: the magic, a known encoding, and the exact
/// length of a dense value (a sparse value is checked as it is walked).
///
/// # Errors
/// [`HllError::NotHll`].
pub fn check(v: &[u8]) -> Result<(), HllError> {
    check_header(v, v.len())
}

/// [`check`] of a value of `len` bytes from its first bytes alone (`head`, the header at
/// least when `len` allows one): Redis's check reads nothing past the header.
///
/// # Errors
/// [`HllError::NotHll`].
pub fn check_header(head: &[u8], len: usize) -> Result<(), HllError> {
    if len < HLL_HDR_SIZE
        || head.len() < HLL_HDR_SIZE
        || &head[..4] != b"HYLL"
        || head[4] > HLL_SPARSE
        || (head[4] == HLL_DENSE && len != HLL_DENSE_SIZE)
    {
        return Err(HllError::NotHll);
    }
    Ok(())
}

/// Whether a (checked) value is dense.
pub fn is_dense(v: &[u8]) -> bool {
    v[4] == HLL_DENSE
}

/// The cached cardinality, if it is valid.
pub fn cached(v: &[u8]) -> Option<u64> {
    let card = u64::from_le_bytes(v[8..16].try_into().expect("8 bytes"));
    (v[15] & 0x80 == 0).then_some(card)
}

/// Stores `card` as the cached cardinality.
pub fn set_cached(v: &mut [u8], card: u64) {
    v[8..16].copy_from_slice(&card.to_le_bytes());
}

/// Marks the cached cardinality stale (only its flag bit changes, as in Redis).
pub fn invalidate(v: &mut [u8]) {
    v[15] |= 0x80;
}

/// The first and last byte of a dense value (header included) that register `i` occupies.
pub fn dense_register_bytes(i: usize) -> (usize, usize) {
    let first = HLL_HDR_SIZE + i * HLL_BITS / 8;
    (first, (first + 1).min(HLL_DENSE_SIZE - 1))
}

fn dense_get(regs: &[u8], i: usize) -> u8 {
    let byte = i * HLL_BITS / 8;
    let fb = (i * HLL_BITS) & 7;
    let b0 = u16::from(regs[byte]);
    // The last register's bits all sit in the last byte (Redis reads the string's terminator).
    let b1 = u16::from(regs.get(byte + 1).copied().unwrap_or(0));
    (((b0 >> fb) | (b1 << (8 - fb))) & u16::from(HLL_REGISTER_MAX)) as u8
}

fn dense_set(regs: &mut [u8], i: usize, val: u8) {
    let byte = i * HLL_BITS / 8;
    let fb = (i * HLL_BITS) & 7;
    let v = u16::from(val);
    let max = u16::from(HLL_REGISTER_MAX);
    regs[byte] &= !((max << fb) as u8);
    regs[byte] |= (v << fb) as u8;
    if let Some(b) = regs.get_mut(byte + 1) {
        *b &= !((max >> (8 - fb)) as u8);
        *b |= (v >> (8 - fb)) as u8;
    }
}

/// Sets dense register `i` to `count` if that is larger (Redis's `hllDenseSet`).
fn dense_raise(regs: &mut [u8], i: usize, count: u8) -> bool {
    if count > dense_get(regs, i) {
        dense_set(regs, i, count);
        true
    } else {
        false
    }
}

fn push_xzero(v: &mut Vec<u8>, len: usize) {
    let l = len - 1;
    v.push((l >> 8) as u8 | 0x40);
    v.push((l & 0xff) as u8);
}

fn val_op(value: u8, len: usize) -> u8 {
    ((value - 1) << 2) | (len as u8 - 1) | 0x80
}

/// One sparse opcode, decoded.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Op {
    /// A run of zero registers (ZERO or XZERO), with the opcode's length in bytes.
    Zero(usize, usize),
    /// A run of registers of one value.
    Val(u8, usize),
}

/// The opcode at `p` of the sparse bytes `s`. An XZERO cut short by the end reads its second
/// byte as 0, as Redis reads the string's terminator there.
fn op_at(s: &[u8], p: usize) -> Op {
    let b = s[p];
    if b & 0xc0 == 0 {
        Op::Zero(usize::from(b & 0x3f) + 1, 1)
    } else if b & 0x80 == 0 {
        let lo = usize::from(s.get(p + 1).copied().unwrap_or(0));
        Op::Zero(((usize::from(b & 0x3f) << 8) | lo) + 1, 2)
    } else {
        Op::Val(((b >> 2) & 0x1f) + 1, usize::from(b & 3) + 1)
    }
}

impl Op {
    fn span(self) -> usize {
        match self {
            Op::Zero(n, _) | Op::Val(_, n) => n,
        }
    }
    fn bytes(self) -> usize {
        match self {
            Op::Zero(_, b) => b,
            Op::Val(..) => 1,
        }
    }
}

/// Walks the sparse registers of `v`, calling `f(first, run, value)` for each run of non-zero
/// registers. Every run is checked to fit within the registers before `f` sees it.
///
/// # Errors
/// [`HllError::Corrupted`] unless the runs cover exactly the 16384 registers.
fn walk_sparse(v: &[u8], mut f: impl FnMut(usize, usize, u8)) -> Result<(), HllError> {
    let s = &v[HLL_HDR_SIZE..];
    let (mut p, mut idx) = (0, 0usize);
    while p < s.len() {
        let op = op_at(s, p);
        if idx + op.span() > HLL_REGISTERS {
            return Err(HllError::Corrupted);
        }
        if let Op::Val(val, n) = op {
            f(idx, n, val);
        }
        idx += op.span();
        p += op.bytes();
    }
    if idx != HLL_REGISTERS {
        return Err(HllError::Corrupted);
    }
    Ok(())
}

/// Converts a sparse value to dense in place (Redis's `hllSparseToDense`): the header is kept
/// (cached cardinality and unused bytes too), the encoding byte becomes dense. Returns whether
/// it converted (false for a value already dense).
///
/// # Errors
/// [`HllError::Corrupted`] for a sparse value whose runs do not cover the registers exactly;
/// the value is left as it was.
pub fn to_dense(v: &mut Vec<u8>) -> Result<bool, HllError> {
    if is_dense(v) {
        return Ok(false);
    }
    let mut dense = vec![0u8; HLL_DENSE_SIZE];
    dense[..HLL_HDR_SIZE].copy_from_slice(&v[..HLL_HDR_SIZE]);
    dense[4] = HLL_DENSE;
    {
        let regs = &mut dense[HLL_HDR_SIZE..];
        walk_sparse(v, |first, n, val| {
            for i in first..first + n {
                dense_set(regs, i, val);
            }
        })?;
    }
    *v = dense;
    Ok(true)
}

/// Raises register `index` to `count` in a sparse value (Redis's `hllSparseSet`), changing
/// the opcodes in place as Redis does so that the bytes stay identical to Redis's; promotes
/// to dense when `count` is above 32 or the value would grow past `sparse_max` bytes.
/// Returns whether the register changed.
fn sparse_set(
    v: &mut Vec<u8>,
    index: usize,
    count: u8,
    sparse_max: usize,
) -> Result<bool, HllError> {
    if count > SPARSE_VAL_MAX_VALUE {
        return promote(v, index, count);
    }
    let base = HLL_HDR_SIZE;
    let end = v.len();
    // Step 1: find the opcode covering `index`.
    let (mut p, mut first) = (base, 0usize);
    let mut prev: Option<usize> = None;
    let mut op = None;
    while p < end {
        let o = op_at(v, p);
        if index < first + o.span() {
            op = Some(o);
            break;
        }
        prev = Some(p);
        p += o.bytes();
        first += o.span();
    }
    let Some(op) = op else {
        return Err(HllError::Corrupted);
    };
    let next = (p + op.bytes() < end).then_some(p + op.bytes());
    let span = op.span();
    // Step 2: the trivial cases, changed in place.
    let mut end = end;
    match op {
        Op::Val(old, _) if old >= count => return Ok(false),
        Op::Val(_, 1) | Op::Zero(1, 1) => v[p] = val_op(count, 1),
        _ => {
            // The general case: split the opcode into up to three (XZERO-VAL-XZERO at most,
            // five bytes) and put them in its place.
            let mut seq: Vec<u8> = Vec::with_capacity(5);
            let last = first + span - 1;
            let zeros = |seq: &mut Vec<u8>, len: usize| {
                if len > SPARSE_ZERO_MAX_LEN {
                    push_xzero(seq, len);
                } else {
                    seq.push((len - 1) as u8);
                }
            };
            match op {
                Op::Zero(..) => {
                    if index != first {
                        zeros(&mut seq, index - first);
                    }
                    seq.push(val_op(count, 1));
                    if index != last {
                        zeros(&mut seq, last - index);
                    }
                }
                Op::Val(cur, _) => {
                    if index != first {
                        seq.push(val_op(cur, index - first));
                    }
                    seq.push(val_op(count, 1));
                    if index != last {
                        seq.push(val_op(cur, last - index));
                    }
                }
            }
            let oldlen = op.bytes() as isize;
            let delta = seq.len() as isize - oldlen;
            if delta > 0 && end + delta as usize > sparse_max {
                return promote(v, index, count);
            }
            let newlen = (end as isize + delta) as usize;
            if delta != 0 {
                if let Some(next) = next {
                    let to = (next as isize + delta) as usize;
                    if delta > 0 {
                        v.resize(newlen, 0);
                    }
                    v.copy_within(next..end, to);
                }
            }
            // An XZERO cut short by the end of the value is replaced as if it were whole, as
            // Redis does; the length is what Redis's sdsIncrLen makes it.
            v.resize(newlen.max(p + seq.len()), 0);
            v[p..p + seq.len()].copy_from_slice(&seq);
            v.truncate(newlen);
            end = newlen;
        }
    }
    // Step 4: merge adjacent VAL opcodes of the same value, scanning up to five opcodes from
    // the one before the change.
    let mut p = prev.unwrap_or(base);
    let mut scan = 5;
    while p < end && scan > 0 {
        scan -= 1;
        let b = v[p];
        if b & 0xc0 == 0x40 {
            p += 2;
            continue;
        } else if b & 0xc0 == 0 {
            p += 1;
            continue;
        }
        if p + 1 < end && v[p + 1] & 0x80 != 0 {
            let (Op::Val(v1, l1), Op::Val(v2, l2)) = (op_at(v, p), op_at(v, p + 1)) else {
                unreachable!("both are VAL opcodes")
            };
            if v1 == v2 && l1 + l2 <= SPARSE_VAL_MAX_LEN {
                v[p + 1] = val_op(v1, l1 + l2);
                v.remove(p);
                end -= 1;
                continue;
            }
        }
        p += 1;
    }
    invalidate(v);
    Ok(true)
}

fn promote(v: &mut Vec<u8>, index: usize, count: u8) -> Result<bool, HllError> {
    to_dense(v)?;
    // A promotion only happens when the register needs raising, so this always changes it.
    Ok(dense_raise(&mut v[HLL_HDR_SIZE..], index, count))
}

/// Raises register `index` to `count` (Redis's `hllDenseSet` / `hllSparseSet`); returns whether
/// it changed. A sparse value may be promoted to dense on the way.
///
/// # Errors
/// [`HllError::Corrupted`] when a sparse value's opcodes do not reach `index`, or promoting a
/// corrupted one.
pub fn set_register(
    v: &mut Vec<u8>,
    index: usize,
    count: u8,
    sparse_max: usize,
) -> Result<bool, HllError> {
    if is_dense(v) {
        Ok(dense_raise(&mut v[HLL_HDR_SIZE..], index, count))
    } else {
        sparse_set(v, index, count, sparse_max)
    }
}

/// Adds an element (Redis's `hllAdd`); returns whether a register changed. The caller marks the
/// cached cardinality stale when anything changed.
///
/// # Errors
/// As [`set_register`].
pub fn add(v: &mut Vec<u8>, ele: &[u8], sparse_max: usize) -> Result<bool, HllError> {
    let (index, count) = pattern(ele);
    set_register(v, index, count, sparse_max)
}

/// Raises each of `max`'s registers to the HLL's (Redis's `hllMerge`).
///
/// # Errors
/// [`HllError::Corrupted`] for a sparse value whose runs do not cover the registers exactly
/// (`max` may then hold part of it).
pub fn merge_into(max: &mut [u8; HLL_REGISTERS], v: &[u8]) -> Result<(), HllError> {
    if is_dense(v) {
        let regs = &v[HLL_HDR_SIZE..];
        for (i, m) in max.iter_mut().enumerate() {
            *m = (*m).max(dense_get(regs, i));
        }
        Ok(())
    } else {
        walk_sparse(v, |first, n, val| {
            for m in &mut max[first..first + n] {
                *m = (*m).max(val);
            }
        })
    }
}

/// The estimate from a histogram of register values (Redis 7's `hllCount`: Otmar Ertl's
/// improved estimator, "New cardinality estimation algorithms for HyperLogLog sketches").
fn estimate(histo: &[u32; 64]) -> u64 {
    let m = HLL_REGISTERS as f64;
    let q = HLL_Q as usize;
    let mut z = m * tau((m - f64::from(histo[q + 1])) / m);
    for j in (1..=q).rev() {
        z += f64::from(histo[j]);
        z *= 0.5;
    }
    z += m * sigma(f64::from(histo[0]) / m);
    // llroundl: halves away from zero; an empty HLL divides by infinity.
    (HLL_ALPHA_INF * m * m / z).round() as u64
}

fn sigma(mut x: f64) -> f64 {
    if x == 1.0 {
        return f64::INFINITY;
    }
    let mut y = 1.0;
    let mut z = x;
    loop {
        x *= x;
        let prev = z;
        z += x * y;
        y += y;
        if prev == z {
            return z;
        }
    }
}

fn tau(mut x: f64) -> f64 {
    if x == 0.0 || x == 1.0 {
        return 0.0;
    }
    let mut y = 1.0;
    let mut z = 1.0 - x;
    loop {
        x = x.sqrt();
        let prev = z;
        y *= 0.5;
        z -= (1.0 - x).powi(2) * y;
        if prev == z {
            return z / 3.0;
        }
    }
}

/// The estimated cardinality of an HLL value, computed from its registers (the cache is not
/// consulted).
///
/// # Errors
/// [`HllError::Corrupted`] for a sparse value whose runs do not cover the registers exactly.
pub fn count(v: &[u8]) -> Result<u64, HllError> {
    let mut histo = [0u32; 64];
    if is_dense(v) {
        let regs = &v[HLL_HDR_SIZE..];
        for i in 0..HLL_REGISTERS {
            histo[usize::from(dense_get(regs, i))] += 1;
        }
    } else {
        let mut nonzero = 0u32;
        walk_sparse(v, |_, n, val| {
            histo[usize::from(val)] += n as u32;
            nonzero += n as u32;
        })?;
        histo[0] = HLL_REGISTERS as u32 - nonzero;
    }
    Ok(estimate(&histo))
}

/// The estimated cardinality of a set of raw registers (one byte each), as PFCOUNT of several
/// keys computes it from their union.
pub fn count_registers(regs: &[u8; HLL_REGISTERS]) -> u64 {
    let mut histo = [0u32; 64];
    for &r in regs {
        histo[usize::from(r & 63)] += 1;
    }
    estimate(&histo)
}

/// The 16384 registers of a dense value.
pub fn dense_registers(v: &[u8]) -> Vec<u8> {
    let regs = &v[HLL_HDR_SIZE..];
    (0..HLL_REGISTERS).map(|i| dense_get(regs, i)).collect()
}

/// PFDEBUG DECODE's text: the sparse opcodes as `z:len`, `Z:len` and `v:value,len`, space
/// separated, `None` for a dense value. Corrupted values are decoded as far as their bytes go.
pub fn decode(v: &[u8]) -> Option<String> {
    if is_dense(v) {
        return None;
    }
    let s = &v[HLL_HDR_SIZE..];
    let mut out = Vec::new();
    let mut p = 0;
    while p < s.len() {
        let op = op_at(s, p);
        out.push(match op {
            Op::Zero(n, 1) => format!("z:{n}"),
            Op::Zero(n, _) => format!("Z:{n}"),
            Op::Val(val, n) => format!("v:{val},{n}"),
        });
        p += op.bytes();
    }
    Some(out.join(" "))
}

/// PFSELFTEST: Redis's own checks, run on this implementation. Dense registers keep the values
/// set in them and leave their neighbours alone; for cardinalities 1, 10, ... 10^7 a dense and
/// a sparse HLL (sparse while it is small, with `sparse_max`) estimate alike and within six
/// standard errors. `seed` varies the elements.
///
/// # Errors
/// Redis's `TESTFAILED ...` text.
pub fn selftest(seed: u64, sparse_max: usize) -> Result<(), String> {
    let mut rng = seed | 1;
    let mut next = move || {
        // xorshift64*: any fair source of register values will do.
        rng ^= rng >> 12;
        rng ^= rng << 25;
        rng ^= rng >> 27;
        rng.wrapping_mul(0x2545_f491_4f6c_dd1d)
    };
    let mut dense = vec![0u8; HLL_DENSE_SIZE];
    dense[..4].copy_from_slice(b"HYLL");
    let mut bytes = vec![0u8; HLL_REGISTERS];
    for _ in 0..1000 {
        let regs = &mut dense[HLL_HDR_SIZE..];
        for (i, b) in bytes.iter_mut().enumerate() {
            *b = (next() as u8) & HLL_REGISTER_MAX;
            dense_set(regs, i, *b);
        }
        for (i, &b) in bytes.iter().enumerate() {
            let got = dense_get(regs, i);
            if got != b {
                return Err(format!(
                    "TESTFAILED Register {i} should be {b} but is {got}"
                ));
            }
        }
    }
    dense[HLL_HDR_SIZE..].fill(0);
    let mut sparse = new_hll();
    let relerr = 1.04 / (HLL_REGISTERS as f64).sqrt();
    let mut checkpoint: u64 = 1;
    let base = next();
    for j in 1..=10_000_000u64 {
        let ele = (j ^ base).to_le_bytes();
        let (index, cnt) = pattern(&ele);
        dense_raise(&mut dense[HLL_HDR_SIZE..], index, cnt);
        set_register(&mut sparse, index, cnt, sparse_max)
            .map_err(|_| "TESTFAILED corrupted sparse HLL")?;
        if j != checkpoint {
            continue;
        }
        if (j as usize) < sparse_max / 2 && is_dense(&sparse) {
            return Err("TESTFAILED sparse encoding not used".into());
        }
        let d = count(&dense).unwrap_or(0);
        if count(&sparse).ok() != Some(d) {
            return Err("TESTFAILED dense/sparse disagree".into());
        }
        let abserr = (checkpoint as i64 - d as i64).unsigned_abs();
        let mut maxerr = (relerr * 6.0 * checkpoint as f64).ceil() as u64;
        // Collisions make a larger error at 10 likely enough to allow for it.
        if j == 10 {
            maxerr = 1;
        }
        if abserr > maxerr {
            return Err(format!(
                "TESTFAILED Too big error. card:{checkpoint} abserr:{abserr}"
            ));
        }
        checkpoint *= 10;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn murmur_matches_redis() {
        // Computed by Redis's own MurmurHash64A (src/hyperloglog.c) compiled as C.
        let cases: &[(&[u8], u64, u64)] = &[
            (b"", 0, 0xd8df_ea65_85bc_9732),
            (b"a", 0x0717_17d2_d36b_6b11, 0x53d2_470a_9b43_b1a7),
            (b"hello", 0x1e68_d17c_457b_f117, 0x0f65_6f01_eecf_e400),
            (b"abcdefgh", 0xafdb_0257_ff41_aa98, 0xf3a6_5df5_5991_4567),
            (b"abcdefghi", 0xc9b9_d843_5614_6ac2, 0x834f_ba4d_9152_daf7),
            (
                b"The quick brown fox jumps over the lazy dog",
                0x5589_ca33_042a_861b,
                0x5160_6c5c_5b56_1ace,
            ),
        ];
        for &(key, zero, seeded) in cases {
            assert_eq!(murmur64a(key, 0), zero, "{key:?}");
            assert_eq!(murmur64a(key, HLL_SEED), seeded, "{key:?}");
        }
    }

    /// An HLL whose registers are the ones a plain array of registers says.
    fn model_of(elements: &[Vec<u8>]) -> Vec<u8> {
        let mut regs = vec![0u8; HLL_REGISTERS];
        for e in elements {
            let (i, c) = pattern(e);
            regs[i] = regs[i].max(c);
        }
        regs
    }

    proptest::proptest! {
        /// Adding elements one by one, in the sparse encoding (with any promotion threshold)
        /// and after the promotion, gives the registers a plain array of maxima gives, and
        /// the sparse opcodes always cover exactly the 16384 registers.
        #[test]
        fn sparse_and_dense_agree_with_a_model(
            elements in proptest::collection::vec(proptest::collection::vec(0u8..8, 0..6), 0..400),
            sparse_max in 16usize..4000,
        ) {
            let mut v = new_hll();
            for e in &elements {
                add(&mut v, e, sparse_max).unwrap();
                if !is_dense(&v) {
                    proptest::prop_assert!(v.len() <= sparse_max.max(HLL_HDR_SIZE + 2));
                    walk_sparse(&v, |_, _, _| {}).unwrap();
                }
            }
            let want = model_of(&elements);
            let mut dense = v.clone();
            to_dense(&mut dense).unwrap();
            proptest::prop_assert_eq!(dense_registers(&dense), want.clone());
            let mut max = [0u8; HLL_REGISTERS];
            merge_into(&mut max, &v).unwrap();
            proptest::prop_assert_eq!(&max[..], &want[..]);
            proptest::prop_assert_eq!(count(&v).unwrap(), count_registers(&max));
            proptest::prop_assert_eq!(count(&dense).unwrap(), count_registers(&max));
        }

        /// Any bytes after a sparse or dense header: every function returns (an error or a
        /// value), never panics or reads out of bounds.
        #[test]
        fn hostile_values_never_panic(
            ops in proptest::collection::vec(proptest::num::u8::ANY, 0..300),
            dense in proptest::bool::ANY,
            elements in proptest::collection::vec(proptest::collection::vec(proptest::num::u8::ANY, 0..4), 0..20),
            sparse_max in 0usize..400,
        ) {
            let mut v = new_hll();
            v.truncate(HLL_HDR_SIZE);
            v[4] = u8::from(!dense);
            v.extend_from_slice(&ops);
            if check(&v).is_err() {
                proptest::prop_assert!(dense);
                return Ok(());
            }
            let _ = count(&v);
            let _ = decode(&v);
            let mut max = [0u8; HLL_REGISTERS];
            let _ = merge_into(&mut max, &v);
            let mut w = v.clone();
            let _ = to_dense(&mut w);
            for e in &elements {
                if add(&mut v, e, sparse_max).is_err() {
                    break;
                }
                let _ = count(&v);
            }
            for i in [0, 1, 63, 64, 65, 8000, HLL_REGISTERS - 1] {
                let mut w = v.clone();
                let _ = set_register(&mut w, i, 33, sparse_max);
                let mut w = v.clone();
                let _ = set_register(&mut w, i, 5, sparse_max);
            }
        }
    }

    #[test]
    fn new_hll_is_what_redis_creates() {
        let v = new_hll();
        assert_eq!(v, b"HYLL\x01\0\0\0\0\0\0\0\0\0\0\0\x7f\xff");
        assert_eq!(count(&v), Ok(0));
        assert_eq!(cached(&v), Some(0));
        assert_eq!(decode(&v).as_deref(), Some("Z:16384"));
    }
}
