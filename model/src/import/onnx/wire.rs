//! The protobuf wire format, read-only: varints, fixed 32/64-bit words and length-delimited
//! fields (<https://protobuf.dev/programming-guides/encoding/>).
//!
//! Hand-written instead of a protobuf crate (docs/dependencies.md): ONNX needs a few messages
//! and no encoder, and a decoder this small can be checked by reading it. Nothing read from
//! the file is trusted: every length is checked against the bytes that are left before it is
//! used, so a truncated or hostile file gives an error, never a panic or a large allocation.

/// One field's value as the wire carries it.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Wire<'a> {
    /// Wire type 0.
    Varint(u64),
    /// Wire type 1.
    Fixed64(u64),
    /// Wire type 2: bytes, a string, a sub-message or a packed repeated field.
    Bytes(&'a [u8]),
    /// Wire type 5.
    Fixed32(u32),
}

/// A cursor over one message's bytes.
pub struct Reader<'a> {
    buf: &'a [u8],
    pos: usize,
}

impl<'a> Reader<'a> {
    /// Reads the fields of `buf`.
    pub fn new(buf: &'a [u8]) -> Reader<'a> {
        Reader { buf, pos: 0 }
    }

    fn varint(&mut self) -> Result<u64, String> {
        let mut value = 0u64;
        for shift in (0..64).step_by(7) {
            let Some(&byte) = self.buf.get(self.pos) else {
                return Err(format!("truncated varint at byte {}", self.pos));
            };
            self.pos += 1;
            value |= u64::from(byte & 0x7f) << shift;
            if byte & 0x80 == 0 {
                return Ok(value);
            }
        }
        Err(format!("varint longer than 10 bytes at byte {}", self.pos))
    }

    fn take(&mut self, n: u64) -> Result<&'a [u8], String> {
        let left = self.buf.len() - self.pos;
        if n > left as u64 {
            return Err(format!(
                "truncated: a field of {n} bytes at byte {} with {left} left",
                self.pos
            ));
        }
        let start = self.pos;
        self.pos += n as usize;
        Ok(&self.buf[start..self.pos])
    }

    /// The next field number and value, or `None` at the end of the message.
    pub fn next_field(&mut self) -> Result<Option<(u64, Wire<'a>)>, String> {
        if self.pos == self.buf.len() {
            return Ok(None);
        }
        let key = self.varint()?;
        let (field, wire_type) = (key >> 3, key & 7);
        if field == 0 {
            return Err(format!("field number 0 at byte {}", self.pos));
        }
        let value = match wire_type {
            0 => Wire::Varint(self.varint()?),
            1 => Wire::Fixed64(u64::from_le_bytes(fixed(self.take(8)?))),
            2 => {
                let n = self.varint()?;
                Wire::Bytes(self.take(n)?)
            }
            5 => Wire::Fixed32(u32::from_le_bytes(fixed(self.take(4)?))),
            t => return Err(format!("unsupported wire type {t} at byte {}", self.pos)),
        };
        Ok(Some((field, value)))
    }
}

fn fixed<const N: usize>(bytes: &[u8]) -> [u8; N] {
    let mut a = [0u8; N];
    a.copy_from_slice(bytes);
    a
}

impl<'a> Wire<'a> {
    /// A varint field (int64 fields are two's complement in 64 bits).
    pub fn int(self) -> Result<i64, String> {
        match self {
            Wire::Varint(v) => Ok(v as i64),
            _ => Err("expected a varint".into()),
        }
    }

    /// A length-delimited field.
    pub fn bytes(self) -> Result<&'a [u8], String> {
        match self {
            Wire::Bytes(b) => Ok(b),
            _ => Err("expected a length-delimited field".into()),
        }
    }

    /// A string field (invalid UTF-8 is replaced, names are only printed and compared).
    pub fn string(self) -> Result<String, String> {
        Ok(String::from_utf8_lossy(self.bytes()?).into_owned())
    }

    /// A float field.
    pub fn float(self) -> Result<f32, String> {
        match self {
            Wire::Fixed32(v) => Ok(f32::from_bits(v)),
            _ => Err("expected a 32-bit float".into()),
        }
    }

    /// A repeated int64 field element or a packed run of them, appended to `out`.
    pub fn ints_into(self, out: &mut Vec<i64>) -> Result<(), String> {
        match self {
            Wire::Varint(v) => out.push(v as i64),
            Wire::Bytes(b) => {
                let mut r = Reader::new(b);
                while r.pos < b.len() {
                    out.push(r.varint()? as i64);
                }
            }
            _ => return Err("expected int64 values".into()),
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_each_wire_type() {
        // field 1 varint 300, field 2 bytes "hi", field 3 fixed32 1.5, field 4 fixed64 7.
        let mut buf = vec![0x08, 0xac, 0x02, 0x12, 2, b'h', b'i', 0x1d];
        buf.extend(1.5f32.to_le_bytes());
        buf.push(0x21);
        buf.extend(7u64.to_le_bytes());
        let mut r = Reader::new(&buf);
        assert_eq!(r.next_field().unwrap(), Some((1, Wire::Varint(300))));
        assert_eq!(r.next_field().unwrap(), Some((2, Wire::Bytes(b"hi"))));
        let (_, f) = r.next_field().unwrap().unwrap();
        assert_eq!(f.float().unwrap(), 1.5);
        assert_eq!(r.next_field().unwrap(), Some((4, Wire::Fixed64(7))));
        assert_eq!(r.next_field().unwrap(), None);
    }

    #[test]
    fn negative_int64_and_packed_ints() {
        let mut buf = vec![0x08];
        buf.extend([0xff; 9]);
        buf.push(0x01); // -1 as a 10-byte varint
        buf.extend([0x12, 3, 1, 2, 0x7f]);
        let mut r = Reader::new(&buf);
        assert_eq!(r.next_field().unwrap().unwrap().1.int().unwrap(), -1);
        let mut v = Vec::new();
        r.next_field()
            .unwrap()
            .unwrap()
            .1
            .ints_into(&mut v)
            .unwrap();
        assert_eq!(v, [1, 2, 127]);
    }

    #[test]
    fn lengths_past_the_end_are_errors_not_allocations() {
        // A length of 2^62 with three bytes left.
        let buf = [
            0x12, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x40, 1, 2, 3,
        ];
        let e = Reader::new(&buf).next_field().unwrap_err();
        assert!(e.starts_with("truncated"), "{e}");
        assert!(Reader::new(&[0x08, 0x80]).next_field().is_err());
        assert!(
            Reader::new(&[0x0b]).next_field().is_err(),
            "group wire type"
        );
    }
}
