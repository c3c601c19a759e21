//! The `.npy` header (NumPy format versions 1.0, 2.0 and 3.0): parsed strictly from bytes,
//! written in the form NumPy writes.
//!
//! A file is the magic `\x93NUMPY`, a major and minor version byte, the header length (`u16`
//! little-endian for version 1, `u32` for versions 2 and 3), the header — a Python dict literal
//! `{'descr': '<f8', 'fortran_order': False, 'shape': (3, 2), }` padded with spaces and ended
//! by `\n` — and the raw data. The parser accepts exactly that: the three keys, once each, a
//! simple type string (`[<>|=][fiub]N`) and a tuple of non-negative integers; anything else
//! (structured or object dtypes, other keys, a shape whose element count or byte size does not
//! fit in `u64`) is a one-line error. It never allocates more than the header's own length,
//! which the caller bounds.

/// The largest header accepted (NumPy's own limit for reading is 10 000 bytes by default).
pub(crate) const MAX_HEADER_LEN: usize = 1 << 20;

/// The scalar kind of a simple dtype.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    /// `f`: IEEE floating point.
    Float,
    /// `i`: signed integer.
    Int,
    /// `u`: unsigned integer.
    Uint,
    /// `b`: bool (one byte).
    Bool,
}

/// A simple dtype: kind, bytes per item and byte order.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Dtype {
    /// The kind.
    pub kind: Kind,
    /// Bytes per item.
    pub size: usize,
    /// Whether multi-byte items are big-endian (`>`); `<`, `|` and `=` (native, on the
    /// little-endian machines this crate runs on) are not.
    pub big_endian: bool,
}

impl Dtype {
    /// NumPy's name of the type (`float64`, `uint8`, `bool`, ...).
    pub fn name(&self) -> String {
        match self.kind {
            Kind::Float => format!("float{}", 8 * self.size),
            Kind::Int => format!("int{}", 8 * self.size),
            Kind::Uint => format!("uint{}", 8 * self.size),
            Kind::Bool => "bool".into(),
        }
    }
    /// The type string (`<f8`, `|u1`, ...).
    pub fn descr(&self) -> String {
        let order = if self.size == 1 {
            '|'
        } else if self.big_endian {
            '>'
        } else {
            '<'
        };
        let kind = match self.kind {
            Kind::Float => 'f',
            Kind::Int => 'i',
            Kind::Uint => 'u',
            Kind::Bool => 'b',
        };
        format!("{order}{kind}{}", self.size)
    }
}

/// A parsed header.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Header {
    /// The dtype.
    pub dtype: Dtype,
    /// Whether the data are in Fortran (column-major) order.
    pub fortran_order: bool,
    /// The shape.
    pub shape: Vec<u64>,
    /// Bytes before the data (magic, version, length field and header).
    pub data_offset: u64,
    /// Elements: the product of the shape.
    pub count: u64,
    /// Bytes of data: `count × size`.
    pub data_bytes: u64,
}

/// The preamble: returns `(header length, bytes before the header)` from the first 12 bytes of
/// a file (fewer when the file is shorter).
pub fn preamble(bytes: &[u8]) -> Result<(usize, usize), String> {
    if bytes.len() < 10 || &bytes[..6] != b"\x93NUMPY" {
        return Err("the file does not start with the NumPy magic \\x93NUMPY".into());
    }
    let (major, minor) = (bytes[6], bytes[7]);
    match major {
        1 => Ok((u16::from_le_bytes([bytes[8], bytes[9]]) as usize, 10)),
        2 | 3 => {
            if bytes.len() < 12 {
                return Err("truncated header".into());
            }
            let len = u32::from_le_bytes([bytes[8], bytes[9], bytes[10], bytes[11]]) as usize;
            Ok((len, 12))
        }
        _ => Err(format!("unsupported .npy format version {major}.{minor}")),
    }
}

/// Parses the header dict `text` (the `header length` bytes after the preamble) of a file whose
/// data start at `data_offset`.
pub fn parse(text: &[u8], data_offset: u64) -> Result<Header, String> {
    let text = std::str::from_utf8(text).map_err(|_| "the header is not UTF-8 text".to_string())?;
    let mut p = Parser {
        s: text.as_bytes(),
        i: 0,
    };
    p.ws();
    p.expect(b'{')?;
    let (mut descr, mut fortran, mut shape) = (None, None, None);
    loop {
        p.ws();
        if p.eat(b'}') {
            break;
        }
        let key = p.string()?;
        p.ws();
        p.expect(b':')?;
        p.ws();
        let dup = |k: &str| format!("the header repeats the key '{k}'");
        match key.as_str() {
            "descr" => {
                if descr.replace(parse_descr(&p.string()?)?).is_some() {
                    return Err(dup("descr"));
                }
            }
            "fortran_order" => {
                if fortran.replace(p.boolean()?).is_some() {
                    return Err(dup("fortran_order"));
                }
            }
            "shape" => {
                if shape.replace(p.tuple()?).is_some() {
                    return Err(dup("shape"));
                }
            }
            other => return Err(format!("unexpected key '{}' in the header", clip(other))),
        }
        p.ws();
        if p.eat(b',') {
            continue;
        }
        p.ws();
        p.expect(b'}')?;
        break;
    }
    // Only padding may follow: spaces and the final newline.
    if p.s[p.i..]
        .iter()
        .any(|&c| !matches!(c, b' ' | b'\n' | b'\r' | b'\t' | b'\0'))
    {
        return Err("unexpected text after the header dict".into());
    }
    let dtype = descr.ok_or("the header has no 'descr'")?;
    let fortran_order = fortran.ok_or("the header has no 'fortran_order'")?;
    let shape: Vec<u64> = shape.ok_or("the header has no 'shape'")?;
    let count = shape
        .iter()
        .try_fold(1u64, |a, &s| a.checked_mul(s))
        .ok_or_else(|| format!("the shape {shape:?} has more elements than fit in 64 bits"))?;
    let data_bytes = count
        .checked_mul(dtype.size as u64)
        .ok_or_else(|| format!("the shape {shape:?} needs more bytes than fit in 64 bits"))?;
    Ok(Header {
        dtype,
        fortran_order,
        shape,
        data_offset,
        count,
        data_bytes,
    })
}

/// A type string `[<>|=][fiub]N` with a size NumPy uses for that kind.
fn parse_descr(s: &str) -> Result<Dtype, String> {
    let b = s.as_bytes();
    let bad = || {
        format!(
            "unsupported dtype '{}' (expected a float, integer or bool type such as '<f8')",
            clip(s)
        )
    };
    if b.len() < 3 {
        return Err(bad());
    }
    let big_endian = match b[0] {
        b'<' | b'|' | b'=' => false,
        b'>' => true,
        _ => return Err(bad()),
    };
    let kind = match b[1] {
        b'f' => Kind::Float,
        b'i' => Kind::Int,
        b'u' => Kind::Uint,
        b'b' => Kind::Bool,
        _ => return Err(bad()),
    };
    let size: usize = s[2..].parse().map_err(|_| bad())?;
    // float16 parses (so that the reader of each array can say which dtypes it needs); no
    // reader accepts it.
    let ok = match kind {
        Kind::Float => matches!(size, 2 | 4 | 8),
        Kind::Int | Kind::Uint => matches!(size, 1 | 2 | 4 | 8),
        Kind::Bool => size == 1,
    };
    if !ok {
        return Err(bad());
    }
    Ok(Dtype {
        kind,
        size,
        big_endian: big_endian && size > 1,
    })
}

/// At most 40 characters of untrusted text, for messages.
fn clip(s: &str) -> String {
    let mut c: String = s.chars().take(40).filter(|c| !c.is_control()).collect();
    if s.chars().count() > 40 {
        c.push('…');
    }
    c
}

struct Parser<'a> {
    s: &'a [u8],
    i: usize,
}

impl Parser<'_> {
    fn ws(&mut self) {
        while self.i < self.s.len() && matches!(self.s[self.i], b' ' | b'\t' | b'\n' | b'\r') {
            self.i += 1;
        }
    }
    fn eat(&mut self, c: u8) -> bool {
        if self.s.get(self.i) == Some(&c) {
            self.i += 1;
            true
        } else {
            false
        }
    }
    fn expect(&mut self, c: u8) -> Result<(), String> {
        if self.eat(c) {
            Ok(())
        } else {
            Err(format!("malformed header: expected '{}' at byte {}", c as char, self.i))
        }
    }
    /// A quoted string without escapes (`'…'` or `"…"`).
    fn string(&mut self) -> Result<String, String> {
        let q = match self.s.get(self.i) {
            Some(&q @ (b'\'' | b'"')) => q,
            _ => return Err(format!("malformed header: expected a quoted string at byte {}", self.i)),
        };
        let start = self.i + 1;
        let len = self.s[start..]
            .iter()
            .position(|&c| c == q || c == b'\\')
            .ok_or("malformed header: unterminated string")?;
        if self.s[start + len] == b'\\' {
            return Err("malformed header: escapes in strings are not supported".into());
        }
        self.i = start + len + 1;
        Ok(String::from_utf8_lossy(&self.s[start..start + len]).into_owned())
    }
    fn boolean(&mut self) -> Result<bool, String> {
        for (word, v) in [(&b"True"[..], true), (&b"False"[..], false)] {
            if self.s[self.i..].starts_with(word) {
                self.i += word.len();
                return Ok(v);
            }
        }
        Err(format!("malformed header: expected True or False at byte {}", self.i))
    }
    /// `()`, `(n,)` or `(n, m, …)` (a trailing comma allowed), non-negative integers.
    fn tuple(&mut self) -> Result<Vec<u64>, String> {
        self.expect(b'(')?;
        let mut v = Vec::new();
        loop {
            self.ws();
            if self.eat(b')') {
                return Ok(v);
            }
            let start = self.i;
            while self.i < self.s.len() && self.s[self.i].is_ascii_digit() {
                self.i += 1;
            }
            if self.i == start {
                return Err(format!("malformed header: expected a dimension at byte {start}"));
            }
            // Digits only, so the text is ASCII; a value above u64 is an error, not a wrap.
            let dim: u64 = std::str::from_utf8(&self.s[start..self.i])
                .ok()
                .and_then(|t| t.parse().ok())
                .ok_or_else(|| "a dimension of the shape does not fit in 64 bits".to_string())?;
            if v.len() == 32 {
                return Err("the shape has more than 32 dimensions".into());
            }
            v.push(dim);
            self.ws();
            if self.eat(b',') {
                continue;
            }
            self.ws();
            self.expect(b')')?;
            return Ok(v);
        }
    }
}

/// The bytes of a file's preamble and header for `dtype` and `shape` (C order), as NumPy
/// writes them: version 1.0 (2.0 if the header would not fit a `u16` length), padded with
/// spaces so that the data start at a multiple of 64 bytes.
pub fn format(dtype: Dtype, shape: &[u64]) -> Vec<u8> {
    let dims: Vec<String> = shape.iter().map(u64::to_string).collect();
    let shape = match dims.len() {
        1 => format!("({},)", dims[0]),
        _ => format!("({})", dims.join(", ")),
    };
    let dict = format!(
        "{{'descr': '{}', 'fortran_order': False, 'shape': {shape}, }}",
        dtype.descr()
    );
    let build = |pre: usize| {
        let pad = (64 - (pre + dict.len() + 1) % 64) % 64;
        format!("{dict}{}\n", " ".repeat(pad))
    };
    let text = build(10);
    let mut out = Vec::with_capacity(12 + text.len());
    if text.len() <= u16::MAX as usize {
        out.extend_from_slice(b"\x93NUMPY\x01\x00");
        out.extend_from_slice(&(text.len() as u16).to_le_bytes());
        out.extend_from_slice(text.as_bytes());
    } else {
        let text = build(12);
        out.extend_from_slice(b"\x93NUMPY\x02\x00");
        out.extend_from_slice(&(text.len() as u32).to_le_bytes());
        out.extend_from_slice(text.as_bytes());
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse_all(bytes: &[u8]) -> Result<Header, String> {
        let (len, pre) = preamble(bytes)?;
        let text = bytes.get(pre..pre + len).ok_or("truncated header")?;
        parse(text, (pre + len) as u64)
    }

    #[test]
    fn round_trips_what_it_writes() {
        for (dtype, shape) in [
            (
                Dtype {
                    kind: Kind::Float,
                    size: 8,
                    big_endian: false,
                },
                vec![3u64, 2],
            ),
            (
                Dtype {
                    kind: Kind::Uint,
                    size: 1,
                    big_endian: false,
                },
                vec![7],
            ),
            (
                Dtype {
                    kind: Kind::Int,
                    size: 4,
                    big_endian: true,
                },
                vec![],
            ),
        ] {
            let b = format(dtype, &shape);
            assert_eq!(b.len() % 64, 0);
            let h = parse_all(&b).unwrap();
            assert_eq!((h.dtype, h.shape.clone(), h.fortran_order), (dtype, shape, false));
            assert_eq!(h.data_offset, b.len() as u64);
        }
    }

    #[test]
    fn numpy_headers_parse() {
        // As written by numpy 1.x and 2.x (double quotes and other spacing too).
        for (text, shape, fortran) in [
            (
                "{'descr': '<f8', 'fortran_order': False, 'shape': (3, 2), }",
                vec![3, 2],
                false,
            ),
            (
                "{'descr': '|b1', 'fortran_order': True, 'shape': (5,), }",
                vec![5],
                true,
            ),
            (
                "{\"descr\":\"<i8\",\"fortran_order\":False,\"shape\":()}",
                vec![],
                false,
            ),
        ] {
            let h = parse(text.as_bytes(), 128).unwrap();
            assert_eq!((h.shape, h.fortran_order), (shape, fortran), "{text}");
        }
    }

    #[test]
    fn float16_parses_so_that_its_reader_can_name_it() {
        let h = parse(b"{'descr': '<f2', 'fortran_order': False, 'shape': (3,), }", 128).unwrap();
        assert_eq!(
            (h.dtype.kind, h.dtype.size, h.dtype.name(), h.dtype.descr()),
            (Kind::Float, 2, "float16".to_string(), "<f2".to_string())
        );
        assert_eq!(h.data_bytes, 6);
        let names: Vec<String> = ["|b1", "|u1", "<i8", "<f4"]
            .iter()
            .map(|d| {
                parse(
                    format!("{{'descr': '{d}', 'fortran_order': False, 'shape': (1,), }}").as_bytes(),
                    128,
                )
                .unwrap()
                .dtype
                .name()
            })
            .collect();
        assert_eq!(names, ["bool", "uint8", "int64", "float32"]);
        assert!(parse(b"{'descr': '<f16', 'fortran_order': False, 'shape': (3,), }", 128).is_err());
    }

    #[test]
    fn hostile_headers_are_one_line_errors() {
        for text in [
            "",
            "{",
            "{'descr': '<f8'",
            "{'descr': '<f8', 'fortran_order': False}",
            "{'descr': '<c16', 'fortran_order': False, 'shape': (3,), }",
            "{'descr': [('a', '<f8')], 'fortran_order': False, 'shape': (3,), }",
            "{'descr': '<f8', 'fortran_order': 0, 'shape': (3,), }",
            "{'descr': '<f8', 'fortran_order': False, 'shape': (-3,), }",
            "{'descr': '<f8', 'fortran_order': False, 'shape': (99999999999999999999,), }",
            "{'descr': '<f8', 'fortran_order': False, 'shape': (4294967296, 4294967296), }",
            "{'descr': '<f8', 'descr': '<f8', 'fortran_order': False, 'shape': (3,), }",
            "{'descr': '<f8', 'fortran_order': False, 'shape': (3,), 'x': 1}",
            "{'descr': '<f8', 'fortran_order': False, 'shape': (3,), } junk",
            "{'descr': 'f\\8', 'fortran_order': False, 'shape': (3,), }",
        ] {
            let e = parse(text.as_bytes(), 128).unwrap_err();
            assert!(!e.contains('\n') && !e.is_empty(), "{text}: {e}");
        }
        assert!(parse(&[0xff, 0xfe], 0).unwrap_err().contains("UTF-8"));
        assert!(preamble(b"\x93NUMPY\x09\x00\x00\x00").is_err());
        assert!(preamble(b"PK\x03\x04").is_err());
    }
}
