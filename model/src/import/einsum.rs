//! Parser for the Antares `einstein_v2` expressions of the reference graph format.
//!
//! Only the structure the importer needs is kept: the output's index names, the reduction
//! (`=`, `+=!` sum, `>=!` max), the first access of each input with its index expressions,
//! and the `where X in n` extents. Element-wise arithmetic on the right-hand side (`.call`,
//! `.when`, `.cast`, `const`) is skipped over, but every bracket must balance and every index
//! must be an integer expression over index names.

use std::collections::BTreeMap;

/// One index expression of a tensor access (`N0`, `N2 + 1536`, `-3 + KH * 1 + HO * 2`, `0`).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct IndexExpr {
    /// The index names in order of first appearance.
    pub vars: Vec<String>,
    /// The value, when the expression has no index names.
    pub constant: Option<i64>,
    /// `N` alone.
    pub bare: bool,
    /// One name plus or minus constants only (`N2 + 1536`): a slice offset.
    pub offset_of_one: bool,
}

/// How the output is combined over indices that do not appear in it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Combine {
    /// `=`: plain assignment.
    Assign,
    /// `+=!`: sum reduction.
    Sum,
    /// `>=!`: max reduction.
    Max,
}

/// One tensor access `inputK[...]`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Access {
    /// K.
    pub input: usize,
    /// One expression per axis.
    pub index: Vec<IndexExpr>,
}

/// A parsed `einstein_v2` expression.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Einsum {
    /// The output's index expressions.
    pub output: Vec<IndexExpr>,
    /// The reduction.
    pub combine: Combine,
    /// First access of each input, in order of appearance.
    pub accesses: Vec<Access>,
    /// `where X in n` extents.
    pub wheres: BTreeMap<String, u64>,
    /// Every index name in order of first appearance (output first).
    pub var_order: Vec<String>,
}

#[derive(Clone, Debug, PartialEq)]
enum Tok {
    Ident(String),
    Int(i64),
    Float,
    Str,
    Punct(char),
}

fn tokenize(s: &str) -> Result<Vec<Tok>, String> {
    let b = s.as_bytes();
    let mut out = Vec::new();
    let mut i = 0;
    while i < b.len() {
        let c = b[i] as char;
        if c.is_ascii_whitespace() {
            i += 1;
        } else if c.is_ascii_alphabetic() || c == '_' {
            let start = i;
            while i < b.len() && (b[i].is_ascii_alphanumeric() || b[i] == b'_') {
                i += 1;
            }
            out.push(Tok::Ident(s[start..i].to_string()));
        } else if c.is_ascii_digit() {
            let start = i;
            while i < b.len() && b[i].is_ascii_digit() {
                i += 1;
            }
            let mut float = false;
            if i < b.len() && b[i] == b'.' && i + 1 < b.len() && b[i + 1].is_ascii_digit() {
                float = true;
                i += 1;
                while i < b.len() && b[i].is_ascii_digit() {
                    i += 1;
                }
            }
            if i < b.len() && (b[i] == b'e' || b[i] == b'E') {
                float = true;
                i += 1;
                if i < b.len() && (b[i] == b'+' || b[i] == b'-') {
                    i += 1;
                }
                while i < b.len() && b[i].is_ascii_digit() {
                    i += 1;
                }
            }
            if float {
                out.push(Tok::Float);
            } else {
                let v = s[start..i]
                    .parse()
                    .map_err(|_| format!("integer '{}' out of range", &s[start..i]))?;
                out.push(Tok::Int(v));
            }
        } else if c == '`' {
            let end = s[i + 1..]
                .find('`')
                .ok_or_else(|| "unterminated `string`".to_string())?;
            i += end + 2;
            out.push(Tok::Str);
        } else if "[](),;+-*/%<>=!.&|".contains(c) {
            out.push(Tok::Punct(c));
            i += 1;
        } else {
            return Err(format!("unexpected character '{c}'"));
        }
    }
    Ok(out)
}

fn index_expr(toks: &[Tok]) -> Result<IndexExpr, String> {
    if toks.is_empty() {
        return Err("empty index expression".into());
    }
    let mut vars: Vec<String> = Vec::new();
    let mut only_additive = true;
    let mut depth = 0i32;
    for t in toks {
        match t {
            Tok::Ident(name) => {
                if !vars.contains(name) {
                    vars.push(name.clone());
                }
            }
            Tok::Int(_) => {}
            Tok::Punct('+') | Tok::Punct('-') => {}
            Tok::Punct('*') | Tok::Punct('/') | Tok::Punct('%') => only_additive = false,
            Tok::Punct('(') => {
                depth += 1;
                only_additive = false;
            }
            Tok::Punct(')') => {
                depth -= 1;
                if depth < 0 {
                    return Err("unbalanced ')' in index".into());
                }
            }
            other => return Err(format!("unexpected {other:?} in index expression")),
        }
    }
    if depth != 0 {
        return Err("unbalanced '(' in index".into());
    }
    let constant = if vars.is_empty() {
        Some(eval_constant(toks)?)
    } else {
        None
    };
    let bare = toks.len() == 1 && vars.len() == 1;
    Ok(IndexExpr {
        offset_of_one: vars.len() == 1 && only_additive,
        vars,
        constant,
        bare,
    })
}

/// Evaluates a constant index made of integers, `+` and `-`.
fn eval_constant(toks: &[Tok]) -> Result<i64, String> {
    let mut total = 0i64;
    let mut sign = 1i64;
    for t in toks {
        match t {
            Tok::Int(v) => total += sign * v,
            Tok::Punct('-') => sign = -sign,
            Tok::Punct('+') => {}
            _ => return Err("constant index must be integers joined by + and -".into()),
        }
        if matches!(t, Tok::Int(_)) {
            sign = 1;
        }
    }
    Ok(total)
}

/// Splits the tokens inside `[`…`]` starting at `open` into index expressions; returns them and
/// the position after `]`.
fn bracket_list(toks: &[Tok], open: usize) -> Result<(Vec<IndexExpr>, usize), String> {
    let mut depth = 0i32;
    let mut items = Vec::new();
    let mut start = open + 1;
    for (k, t) in toks.iter().enumerate().skip(open + 1) {
        match t {
            Tok::Punct('(') | Tok::Punct('[') => depth += 1,
            Tok::Punct(')') => depth -= 1,
            Tok::Punct(']') if depth == 0 => {
                if k > start || !items.is_empty() {
                    items.push(index_expr(&toks[start..k])?);
                }
                return Ok((items, k + 1));
            }
            Tok::Punct(']') => depth -= 1,
            Tok::Punct(',') if depth == 0 => {
                items.push(index_expr(&toks[start..k])?);
                start = k + 1;
            }
            _ => {}
        }
    }
    Err("unterminated '['".into())
}

fn input_number(name: &str) -> Option<usize> {
    name.strip_prefix("input").and_then(|n| n.parse().ok())
}

/// Parses one `einstein_v2` expression.
pub fn parse(text: &str) -> Result<Einsum, String> {
    let toks = tokenize(text)?;
    match toks.first() {
        Some(Tok::Ident(o)) if o == "output0" => {}
        _ => return Err("expression must start with output0[...]".into()),
    }
    if toks.get(1) != Some(&Tok::Punct('[')) {
        return Err("expected '[' after output0".into());
    }
    let (output, mut pos) = bracket_list(&toks, 1)?;
    let combine = match (toks.get(pos), toks.get(pos + 1), toks.get(pos + 2)) {
        (Some(Tok::Punct('+')), Some(Tok::Punct('=')), Some(Tok::Punct('!'))) => {
            pos += 3;
            Combine::Sum
        }
        (Some(Tok::Punct('>')), Some(Tok::Punct('=')), Some(Tok::Punct('!'))) => {
            pos += 3;
            Combine::Max
        }
        (Some(Tok::Punct('=')), _, _) => {
            pos += 1;
            Combine::Assign
        }
        _ => return Err("expected '=', '+=!' or '>=!' after the output".into()),
    };
    let mut var_order: Vec<String> = Vec::new();
    let note_vars = |idx: &[IndexExpr], order: &mut Vec<String>| {
        for e in idx {
            for v in &e.vars {
                if !order.contains(v) {
                    order.push(v.clone());
                }
            }
        }
    };
    note_vars(&output, &mut var_order);
    let mut accesses: Vec<Access> = Vec::new();
    let mut depth = 0i32;
    let mut saw_rhs = false;
    while pos < toks.len() {
        match &toks[pos] {
            Tok::Ident(w) if w == "where" && depth == 0 => break,
            Tok::Punct(';') if depth == 0 => break,
            Tok::Ident(name) if input_number(name).is_some() => {
                saw_rhs = true;
                let k = input_number(name).unwrap_or_default();
                if toks.get(pos + 1) == Some(&Tok::Punct('[')) {
                    let (index, next) = bracket_list(&toks, pos + 1)?;
                    note_vars(&index, &mut var_order);
                    if !accesses.iter().any(|a| a.input == k) {
                        accesses.push(Access { input: k, index });
                    }
                    pos = next;
                    continue;
                }
            }
            Tok::Punct('(') | Tok::Punct('[') => depth += 1,
            Tok::Punct(')') | Tok::Punct(']') => {
                depth -= 1;
                if depth < 0 {
                    return Err("unbalanced bracket on the right-hand side".into());
                }
            }
            _ => saw_rhs = true,
        }
        pos += 1;
    }
    if depth != 0 {
        return Err("unbalanced bracket on the right-hand side".into());
    }
    if !saw_rhs {
        return Err("empty right-hand side".into());
    }
    let mut wheres = BTreeMap::new();
    if matches!(toks.get(pos), Some(Tok::Ident(w)) if w == "where") {
        pos += 1;
        loop {
            match (toks.get(pos), toks.get(pos + 1), toks.get(pos + 2)) {
                (Some(Tok::Ident(name)), Some(Tok::Ident(kw)), Some(Tok::Int(n)))
                    if kw == "in" && *n > 0 =>
                {
                    wheres.insert(name.clone(), *n as u64);
                    if !var_order.contains(name) {
                        var_order.push(name.clone());
                    }
                    pos += 3;
                }
                _ => return Err("expected 'NAME in EXTENT' after 'where'".into()),
            }
            if toks.get(pos) == Some(&Tok::Punct(',')) {
                pos += 1;
            } else {
                break;
            }
        }
    }
    match toks.get(pos) {
        None | Some(Tok::Punct(';')) => {}
        Some(t) => return Err(format!("unexpected {t:?} after the expression")),
    }
    if toks.len() > pos + 1 {
        return Err("text after ';'".into());
    }
    Ok(Einsum {
        output,
        combine,
        accesses,
        wheres,
        var_order,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn matmul_with_sum_reduction() {
        let e = parse(" output0[S0, N, M] +=! input0[S0, N, K] * input1[K, M]; ").unwrap();
        assert_eq!(e.combine, Combine::Sum);
        assert_eq!(e.var_order, ["S0", "N", "M", "K"]);
        assert_eq!(e.accesses.len(), 2);
        assert!(e.accesses[1].index.iter().all(|i| i.bare));
    }

    #[test]
    fn slice_offsets_wheres_and_constants() {
        let e = parse(
            " output0[N0, N1, N2] = input0[N0 + 0, N1 + 0, N2 + 1536] where N0 in 99 , N1 in 66 , N2 in 768; ",
        )
        .unwrap();
        assert!(e.accesses[0].index[2].offset_of_one);
        assert_eq!(e.wheres["N2"], 768);
        let b = parse(" output0[N0, N1] = input0[0] where N0 in 99, N1 in 66; ").unwrap();
        assert_eq!(b.accesses[0].index[0].constant, Some(0));
    }

    #[test]
    fn conv_with_when_and_max_pool() {
        let conv = " output0[N, F, HO, WO] +=! input0[N, C, -3 + KH * 1 + HO * 2, -3 + KW * 1 + WO * 2].when([-3 + KH * 1 + HO * 2 >= 0, -3 + KH * 1 + HO * 2 < 224], const(0.0).cast(input0[N, C, -3 + KH * 1 + HO * 2, -3 + KW * 1 + WO * 2].dtype())) * input1[F, C, KH, KW] where HO in 112, WO in 112; ";
        let e = parse(conv).unwrap();
        assert_eq!(e.accesses[0].index[2].vars, ["KH", "HO"]);
        assert_eq!(e.var_order, ["N", "F", "HO", "WO", "C", "KH", "KW"]);
        let pool = " output0[N, C, D0, D1] >=! input0[N, C, D0 * 2 + K0 - 1, D1 * 2 + K1 - 1].when([D0 * 2 + K0 - 1 >=0], const(-3.4e38).cast(input0.dtype())) where D0 in 56, K0 in 3 , D1 in 56, K1 in 3; ";
        assert_eq!(parse(pool).unwrap().combine, Combine::Max);
    }

    #[test]
    fn malformed_expressions_are_errors() {
        assert!(parse("output0[N0 = input0[N0];").is_err());
        assert!(parse("output1[N0] = input0[N0];").is_err());
        assert!(parse("output0[N0] = input0[N0] where N0 on 3;").is_err());
        assert!(parse("output0[N0] = (input0[N0];").is_err());
        assert!(parse("output0[N0] = input0[N0 $ 1];").is_err());
    }
}
