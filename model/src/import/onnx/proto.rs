//! The ONNX messages the importer reads, decoded from the wire (field numbers from the
//! vendored `model/proto/onnx.proto`, onnx 1.17.0).
//!
//! Only what scheduling needs is kept: the graph's nodes, the names, shapes and element types
//! of initializers and inputs, and node attributes. Weight data is never decoded (only its
//! dims count; the raw bytes of float initializers are borrowed from the file, to be
//! compared for transposed copies); integer tensors are, when small, because shape
//! arithmetic reads them.
//! Unknown fields are skipped, as protobuf requires.

use super::wire::{Reader, Wire};

/// Integer tensors with more elements than this keep no data (shape plumbing is far smaller).
pub const MAX_INT_DATA: u64 = 1 << 16;

/// `ModelProto`: the default-domain opset and the graph.
#[derive(Debug, Default)]
pub struct Model<'a> {
    /// `opset_import` version of the default (`""` or `ai.onnx`) domain; 0 if absent.
    pub opset: i64,
    /// The main graph.
    pub graph: Graph<'a>,
}

/// `GraphProto`.
#[derive(Debug, Default)]
pub struct Graph<'a> {
    /// Nodes in topological order (as ONNX requires).
    pub nodes: Vec<Node>,
    /// Constant tensors: the weights.
    pub initializers: Vec<Tensor>,
    /// The `raw_data` bytes of each float initializer (`None` for other types, for data
    /// in `float_data` or in an external file), borrowed from the file: never decoded, only
    /// compared to find transposed copies (a tied LM head).
    pub float_raw: Vec<Option<&'a [u8]>>,
    /// Graph inputs (may repeat initializer names in older files).
    pub inputs: Vec<ValueInfo>,
}

/// `NodeProto`.
#[derive(Debug, Default)]
pub struct Node {
    /// Input value names; `""` is an omitted optional input.
    pub inputs: Vec<String>,
    /// Output value names.
    pub outputs: Vec<String>,
    /// The node's name (may be empty).
    pub name: String,
    /// The operator.
    pub op_type: String,
    /// The operator set domain (`""` for the standard one).
    pub domain: String,
    /// Attributes.
    pub attributes: Vec<Attribute>,
}

/// `AttributeProto`: the scalar, list and tensor kinds.
#[derive(Debug, Default)]
pub struct Attribute {
    /// Its name.
    pub name: String,
    /// `f`.
    pub f: Option<f32>,
    /// `i`.
    pub i: Option<i64>,
    /// `s`.
    pub s: Option<String>,
    /// `t`.
    pub t: Option<Tensor>,
    /// `ints`.
    pub ints: Vec<i64>,
}

/// `TensorProto`: name, dims, element type and (integers only) the data.
#[derive(Debug, Default, Clone)]
pub struct Tensor {
    /// Its name.
    pub name: String,
    /// Dimensions (checked non-negative by [`Tensor::shape`]).
    pub dims: Vec<i64>,
    /// `TensorProto.DataType`.
    pub data_type: i64,
    /// The values of an integer or boolean tensor of at most [`MAX_INT_DATA`] elements.
    pub int_data: Option<Vec<i64>>,
    raw: Vec<u8>,
    int64_data: Vec<i64>,
    int32_data: Vec<i64>,
}

/// One dimension of a declared shape.
#[derive(Debug, Clone, PartialEq)]
pub enum Dim {
    /// A number.
    Value(i64),
    /// A symbolic name (`batch`, `sequence`).
    Param(String),
    /// Neither.
    Unknown,
}

/// `ValueInfoProto`: a graph input's name and declared tensor shape.
#[derive(Debug, Default)]
pub struct ValueInfo {
    /// Its name.
    pub name: String,
    /// The declared shape, `None` when the type has no shape (or is not a tensor).
    pub shape: Option<Vec<Dim>>,
}

/// Element types that are integers or booleans (shape plumbing).
pub fn is_integer_type(data_type: i64) -> bool {
    matches!(data_type, 2..=7 | 9 | 12 | 13)
}

fn each_field<'a>(
    buf: &'a [u8],
    mut f: impl FnMut(u64, Wire<'a>) -> Result<(), String>,
) -> Result<(), String> {
    let mut r = Reader::new(buf);
    while let Some((field, value)) = r.next_field()? {
        f(field, value)?;
    }
    Ok(())
}

/// Decodes a whole `.onnx` file.
pub fn decode_model(buf: &[u8]) -> Result<Model<'_>, String> {
    let mut m = Model::default();
    let mut graph = None;
    each_field(buf, |field, v| {
        match field {
            7 => graph = Some(decode_graph(v.bytes()?)?),
            8 => {
                let (mut domain, mut version) = (String::new(), 0);
                each_field(v.bytes()?, |f, v| {
                    match f {
                        1 => domain = v.string()?,
                        2 => version = v.int()?,
                        _ => {}
                    }
                    Ok(())
                })?;
                if domain.is_empty() || domain == "ai.onnx" {
                    m.opset = version;
                }
            }
            _ => {}
        }
        Ok(())
    })
    .map_err(|e| format!("not a valid ONNX model: {e}"))?;
    m.graph = graph.ok_or("not a valid ONNX model: it has no graph")?;
    Ok(m)
}

fn decode_graph(buf: &[u8]) -> Result<Graph<'_>, String> {
    let mut g = Graph::default();
    each_field(buf, |field, v| {
        match field {
            1 => g.nodes.push(decode_node(v.bytes()?)?),
            5 => {
                let (t, raw) = decode_tensor(v.bytes()?)?;
                g.initializers.push(t);
                g.float_raw.push(raw);
            }
            11 => g.inputs.push(decode_value_info(v.bytes()?)?),
            15 => return Err("sparse initializers are not supported".into()),
            _ => {}
        }
        Ok(())
    })?;
    Ok(g)
}

fn decode_node(buf: &[u8]) -> Result<Node, String> {
    let mut n = Node::default();
    each_field(buf, |field, v| {
        match field {
            1 => n.inputs.push(v.string()?),
            2 => n.outputs.push(v.string()?),
            3 => n.name = v.string()?,
            4 => n.op_type = v.string()?,
            5 => n.attributes.push(decode_attribute(v.bytes()?)?),
            7 => n.domain = v.string()?,
            _ => {}
        }
        Ok(())
    })?;
    Ok(n)
}

fn decode_attribute(buf: &[u8]) -> Result<Attribute, String> {
    let mut a = Attribute::default();
    each_field(buf, |field, v| {
        match field {
            1 => a.name = v.string()?,
            2 => a.f = Some(v.float()?),
            3 => a.i = Some(v.int()?),
            4 => a.s = Some(v.string()?),
            5 => a.t = Some(decode_tensor(v.bytes()?)?.0),
            8 => v.ints_into(&mut a.ints)?,
            _ => {}
        }
        Ok(())
    })?;
    Ok(a)
}

/// Bytes per element of the float types (FLOAT, FLOAT16, DOUBLE, BFLOAT16).
pub fn float_width(data_type: i64) -> Option<usize> {
    match data_type {
        1 => Some(4),
        10 | 16 => Some(2),
        11 => Some(8),
        _ => None,
    }
}

/// A tensor, and its `raw_data` when it is a float tensor holding all its values there.
fn decode_tensor(buf: &[u8]) -> Result<(Tensor, Option<&[u8]>), String> {
    let mut t = Tensor::default();
    let mut float_raw = None;
    each_field(buf, |field, v| {
        match field {
            1 => v.ints_into(&mut t.dims)?,
            2 => t.data_type = v.int()?,
            5 => v.ints_into(&mut t.int32_data)?,
            7 => v.ints_into(&mut t.int64_data)?,
            8 => t.name = v.string()?,
            9 => {
                let raw = v.bytes()?;
                float_raw = Some(raw);
                if raw.len() as u64 <= 8 * MAX_INT_DATA {
                    t.raw = raw.to_vec();
                }
            }
            _ => {}
        }
        Ok(())
    })?;
    let n = t.elements()?;
    if is_integer_type(t.data_type) && n <= MAX_INT_DATA {
        t.int_data = Some(t.decode_ints(n)?);
    }
    t.raw = Vec::new();
    t.int64_data = Vec::new();
    t.int32_data = Vec::new();
    let whole = |raw: &&[u8]| {
        float_width(t.data_type)
            .is_some_and(|w| (w as u64).checked_mul(n) == Some(raw.len() as u64))
    };
    let float_raw = float_raw.filter(whole);
    Ok((t, float_raw))
}

impl Tensor {
    /// The dims as extents, refusing negative ones.
    pub fn shape(&self) -> Result<Vec<u64>, String> {
        self.dims
            .iter()
            .map(|&d| u64::try_from(d).map_err(|_| format!("tensor '{}' has dim {d}", self.name)))
            .collect()
    }

    /// Number of elements, refusing overflow.
    pub fn elements(&self) -> Result<u64, String> {
        self.shape()?
            .iter()
            .try_fold(1u64, |a, &d| a.checked_mul(d))
            .ok_or_else(|| format!("tensor '{}' is too large", self.name))
    }

    fn decode_ints(&self, n: u64) -> Result<Vec<i64>, String> {
        let n = n as usize;
        let from_list = match self.data_type {
            7 => &self.int64_data,
            _ => &self.int32_data,
        };
        let values: Vec<i64> = if !self.raw.is_empty() {
            let width = match self.data_type {
                7 | 13 => 8,
                6 | 12 => 4,
                4 | 5 => 2,
                _ => 1,
            };
            let signed = matches!(self.data_type, 3 | 5 | 6 | 7);
            self.raw
                .chunks_exact(width)
                .map(|c| {
                    let mut b = [0u8; 8];
                    b[..width].copy_from_slice(c);
                    let v = u64::from_le_bytes(b);
                    let shift = 64 - 8 * width as u32;
                    if signed && shift > 0 {
                        ((v << shift) as i64) >> shift
                    } else {
                        v as i64
                    }
                })
                .collect()
        } else {
            from_list.clone()
        };
        if values.len() != n {
            return Err(format!(
                "tensor '{}' has {} values for {n} elements",
                self.name,
                values.len()
            ));
        }
        Ok(values)
    }
}

fn decode_value_info(buf: &[u8]) -> Result<ValueInfo, String> {
    let mut vi = ValueInfo::default();
    each_field(buf, |field, v| {
        match field {
            1 => vi.name = v.string()?,
            2 => {
                // TypeProto.tensor_type (1) → TypeProto.Tensor.shape (2) → dims (1).
                each_field(v.bytes()?, |f, v| {
                    if f == 1 {
                        each_field(v.bytes()?, |f, v| {
                            if f == 2 {
                                vi.shape = Some(decode_shape(v.bytes()?)?);
                            }
                            Ok(())
                        })?;
                    }
                    Ok(())
                })?;
            }
            _ => {}
        }
        Ok(())
    })?;
    Ok(vi)
}

fn decode_shape(buf: &[u8]) -> Result<Vec<Dim>, String> {
    let mut dims = Vec::new();
    each_field(buf, |field, v| {
        if field == 1 {
            let mut d = Dim::Unknown;
            each_field(v.bytes()?, |f, v| {
                match f {
                    1 => d = Dim::Value(v.int()?),
                    2 => d = Dim::Param(v.string()?),
                    _ => {}
                }
                Ok(())
            })?;
            dims.push(d);
        }
        Ok(())
    })?;
    Ok(dims)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn field(n: u8, payload: &[u8]) -> Vec<u8> {
        let mut v = vec![(n << 3) | 2, payload.len() as u8];
        v.extend(payload);
        v
    }

    #[test]
    fn decodes_an_int64_tensor_from_raw_data() {
        let mut t = vec![0x08, 2, 0x10, 7]; // dims [2], INT64
        let mut raw = 5i64.to_le_bytes().to_vec();
        raw.extend((-1i64).to_le_bytes());
        t.extend(field(9, &raw));
        let (t, raw) = decode_tensor(&t).unwrap();
        assert_eq!(t.int_data, Some(vec![5, -1]));
        assert_eq!(raw, None, "an integer tensor has no float data");
    }

    #[test]
    fn a_count_mismatch_is_an_error() {
        let t = [0x08, 3, 0x10, 7, 0x3a, 1, 4]; // dims [3], INT64, int64_data [4]
        assert!(decode_tensor(&t).unwrap_err().contains("1 values for 3"));
    }

    #[test]
    fn keeps_the_raw_bytes_of_a_whole_float_tensor_only() {
        let mut t = vec![0x08, 2, 0x10, 10]; // dims [2], FLOAT16
        t.extend(field(9, &[1, 2, 3, 4]));
        assert_eq!(decode_tensor(&t).unwrap().1, Some(&[1u8, 2, 3, 4][..]));
        let mut short = vec![0x08, 3, 0x10, 10]; // 3 elements, 2 values' bytes
        short.extend(field(9, &[1, 2, 3, 4]));
        assert_eq!(decode_tensor(&short).unwrap().1, None);
    }

    #[test]
    fn decodes_a_symbolic_shape() {
        let dim_b = field(2, b"batch");
        let dim_4 = [0x08, 4];
        let mut shape = field(1, &dim_b);
        shape.extend(field(1, &dim_4));
        let tensor_type = field(2, &shape);
        let ty = field(1, &tensor_type);
        let mut vi = field(1, b"x");
        vi.extend(field(2, &ty));
        let vi = decode_value_info(&vi).unwrap();
        assert_eq!(vi.name, "x");
        assert_eq!(
            vi.shape,
            Some(vec![Dim::Param("batch".into()), Dim::Value(4)])
        );
    }
}
