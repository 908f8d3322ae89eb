//! The filter language's grammar: text to a tree of tests, each piece with
//! where it stands in the text, so that an error can point at it.
//!
//! ```text
//! expr    := and ( ("or" | "||") and )*
//! and     := unary ( ("and" | "&&") unary )*
//! unary   := ("not" | "!") unary | "(" expr ")" | test
//! test    := NAME [ op value | "in" "{" value ("," value)* "}" ]
//! op      := "==" | "=" | "!=" | "<" | "<=" | ">" | ">=" | "contains" | "matches"
//! value   := NUMBER[unit] | "string" | NAME
//! ```
//!
//! Names are letters, digits, `_`, `.` and `-` (`body.Topics.Name`,
//! `client_id`, `NOT_COORDINATOR`); numbers may be negative, hexadecimal
//! (`0x1f`) or decimal fractions, with a unit right after (`100ms`, `1MiB`);
//! strings take `\"`, `\\`, `\n`, `\t`, `\r`, `\0` and `\xHH`.

/// A piece of the expression with where it is: `at` and `len` in bytes of the text.
#[derive(Clone, Debug, PartialEq)]
pub struct Spanned<T> {
    pub at: usize,
    pub len: usize,
    pub item: T,
}

#[derive(Clone, Debug, PartialEq)]
pub enum Ast {
    And(Box<Ast>, Box<Ast>),
    Or(Box<Ast>, Box<Ast>),
    Not(Box<Ast>),
    /// A name alone (a fact that is true or not, or a field that is present),
    /// or a name compared with values.
    Test {
        name: Spanned<String>,
        compare: Option<(Spanned<Op>, Vec<Spanned<Literal>>)>,
    },
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Op {
    Eq,
    Ne,
    Lt,
    Le,
    Gt,
    Ge,
    Contains,
    Matches,
    /// Equal to one of a set.
    In,
}

impl Op {
    pub fn text(self) -> &'static str {
        match self {
            Op::Eq => "==",
            Op::Ne => "!=",
            Op::Lt => "<",
            Op::Le => "<=",
            Op::Gt => ">",
            Op::Ge => ">=",
            Op::Contains => "contains",
            Op::Matches => "matches",
            Op::In => "in",
        }
    }

    /// Whether it orders values (not only tells them equal or not).
    pub fn orders(self) -> bool {
        matches!(self, Op::Lt | Op::Le | Op::Gt | Op::Ge)
    }
}

#[derive(Clone, Debug, PartialEq)]
pub enum Literal {
    /// A number as written (its text kept: `0x10`, `2.5`), and its unit.
    Number {
        value: f64,
        int: Option<i128>,
        unit: Option<String>,
    },
    /// A quoted string's bytes, escapes applied.
    Str(Vec<u8>),
    /// A bare word: an error name, an API name, `request`, `true`.
    Name(String),
}

/// Why an expression does not parse or compile: where, and what was wrong.
#[derive(Clone, Debug, PartialEq)]
pub struct SyntaxError {
    pub at: usize,
    pub len: usize,
    pub message: String,
}

impl SyntaxError {
    pub fn new(at: usize, len: usize, message: impl Into<String>) -> SyntaxError {
        SyntaxError {
            at,
            len,
            message: message.into(),
        }
    }

    /// The message, the expression, and a caret line under the place
    /// (columns counted in characters of the text, which is shown as given:
    /// callers escape it for the terminal).
    pub fn show(&self, text: &str) -> String {
        let before = text.get(..self.at).map_or(0, |t| t.chars().count());
        let under = text
            .get(self.at..(self.at + self.len).min(text.len()))
            .map_or(1, |t| t.chars().count().max(1));
        format!(
            "{}\n  {text}\n  {}{}",
            self.message,
            " ".repeat(before),
            "^".repeat(under)
        )
    }
}

/// Expressions longer than this are refused (a typed filter is a line).
pub(crate) const MAX_TEXT: usize = 64 * 1024;
/// Nesting deeper than this is refused (the parser recurses per level).
pub const MAX_DEPTH: usize = 64;
/// Expressions with more tests than this are refused: a flat chain of
/// `or`s nests as deep as it is long, and evaluating it recurses that deep.
pub(crate) const MAX_TESTS: usize = 1024;

#[derive(Clone, Debug, PartialEq)]
enum Token {
    Name(String),
    Number(Literal),
    Str(Vec<u8>),
    Open,
    Close,
    OpenSet,
    CloseSet,
    Comma,
    Op(Op),
    And,
    Or,
    Not,
    End,
}

/// "unexpected X", or that the text ended.
fn unexpected(t: &Token) -> String {
    match t {
        Token::End => "the expression ends here".into(),
        t => format!("unexpected {}", describe(t)),
    }
}

fn describe(t: &Token) -> String {
    match t {
        Token::Name(n) => format!("`{n}`"),
        // After "unexpected": "unexpected number", as "unexpected `)`".
        Token::Number(_) => "number".into(),
        Token::Str(_) => "string".into(),
        Token::Open => "`(`".into(),
        Token::Close => "`)`".into(),
        Token::OpenSet => "`{`".into(),
        Token::CloseSet => "`}`".into(),
        Token::Comma => "`,`".into(),
        Token::Op(o) => format!("`{}`", o.text()),
        Token::And => "`and`".into(),
        Token::Or => "`or`".into(),
        Token::Not => "`not`".into(),
        Token::End => "the end".into(),
    }
}

fn is_name_start(c: char) -> bool {
    c.is_ascii_alphabetic() || c == '_'
}

fn is_name_char(c: char) -> bool {
    c.is_ascii_alphanumeric() || matches!(c, '_' | '.' | '-')
}

fn lex(text: &str) -> Result<Vec<Spanned<Token>>, SyntaxError> {
    let mut out = Vec::new();
    let b = text.as_bytes();
    let mut i = 0;
    while i < b.len() {
        let c = b[i] as char;
        if c.is_ascii_whitespace() {
            i += 1;
            continue;
        }
        let start = i;
        let two = text.get(i..i + 2).unwrap_or("");
        let (token, len) = match (c, two) {
            (_, "==") => (Token::Op(Op::Eq), 2),
            (_, "!=") => (Token::Op(Op::Ne), 2),
            (_, "<=") => (Token::Op(Op::Le), 2),
            (_, ">=") => (Token::Op(Op::Ge), 2),
            (_, "&&") => (Token::And, 2),
            (_, "||") => (Token::Or, 2),
            ('=', _) => (Token::Op(Op::Eq), 1),
            ('<', _) => (Token::Op(Op::Lt), 1),
            ('>', _) => (Token::Op(Op::Gt), 1),
            ('!', _) => (Token::Not, 1),
            ('(', _) => (Token::Open, 1),
            (')', _) => (Token::Close, 1),
            ('{', _) => (Token::OpenSet, 1),
            ('}', _) => (Token::CloseSet, 1),
            (',', _) => (Token::Comma, 1),
            ('"', _) => {
                let (s, len) = string(text, i)?;
                (Token::Str(s), len)
            }
            _ if c.is_ascii_digit()
                || (c == '-' && b.get(i + 1).is_some_and(u8::is_ascii_digit)) =>
            {
                let (n, len) = number(text, i)?;
                (Token::Number(n), len)
            }
            _ if is_name_start(c) => {
                let len = text[i..]
                    .find(|c: char| !is_name_char(c))
                    .unwrap_or(text.len() - i);
                let word = &text[i..i + len];
                let token = match word {
                    "and" => Token::And,
                    "or" => Token::Or,
                    "not" => Token::Not,
                    "contains" => Token::Op(Op::Contains),
                    "matches" => Token::Op(Op::Matches),
                    "in" => Token::Op(Op::In),
                    w => Token::Name(w.to_string()),
                };
                (token, len)
            }
            _ => {
                let len = text[i..].chars().next().map_or(1, char::len_utf8);
                return Err(SyntaxError::new(
                    i,
                    len,
                    format!(
                        "unexpected {}: expected a name, a value, an operator or a parenthesis",
                        crate::text::escape::quote(&text[i..i + len])
                    ),
                ));
            }
        };
        out.push(Spanned {
            at: start,
            len,
            item: token,
        });
        i += len;
    }
    out.push(Spanned {
        at: text.len(),
        len: 0,
        item: Token::End,
    });
    Ok(out)
}

/// A quoted string from `at` (its opening quote): its bytes and its length in the text.
fn string(text: &str, at: usize) -> Result<(Vec<u8>, usize), SyntaxError> {
    let b = text.as_bytes();
    let mut out = Vec::new();
    let mut i = at + 1;
    while i < b.len() {
        match b[i] {
            b'"' => return Ok((out, i + 1 - at)),
            b'\\' => {
                let esc = b.get(i + 1).copied();
                let (byte, used) = match esc {
                    Some(b'"') => (b'"', 2),
                    Some(b'\\') => (b'\\', 2),
                    Some(b'n') => (b'\n', 2),
                    Some(b't') => (b'\t', 2),
                    Some(b'r') => (b'\r', 2),
                    Some(b'0') => (0, 2),
                    Some(b'x') => {
                        let hex = text
                            .get(i + 2..i + 4)
                            .and_then(|h| u8::from_str_radix(h, 16).ok());
                        match hex {
                            Some(v) => (v, 4),
                            None => {
                                return Err(SyntaxError::new(
                                    i,
                                    2,
                                    "\\x needs two hexadecimal digits (\\x0a)",
                                ))
                            }
                        }
                    }
                    _ => {
                        return Err(SyntaxError::new(
                            i,
                            2.min(b.len() - i),
                            "unknown escape: use \\\" \\\\ \\n \\t \\r \\0 or \\xHH",
                        ))
                    }
                };
                out.push(byte);
                i += used;
            }
            c => {
                out.push(c);
                i += 1;
            }
        }
    }
    Err(SyntaxError::new(
        at,
        b.len() - at,
        "this string has no closing quote",
    ))
}

/// A number from `at`, with a unit written right after it.
fn number(text: &str, at: usize) -> Result<(Literal, usize), SyntaxError> {
    let rest = &text[at..];
    let digits_end = |s: &str, hex: bool| {
        s.find(|c: char| !(c.is_ascii_digit() || c == '_' || (hex && c.is_ascii_hexdigit())))
            .unwrap_or(s.len())
    };
    let negative = rest.starts_with('-');
    let body = &rest[usize::from(negative)..];
    let (value, int, used) = if let Some(hex) =
        body.strip_prefix("0x").or_else(|| body.strip_prefix("0X"))
    {
        let n = digits_end(hex, true);
        let digits: String = hex[..n].chars().filter(|c| *c != '_').collect();
        let v = i128::from_str_radix(&digits, 16).map_err(|_| {
            SyntaxError::new(
                at,
                2 + n + usize::from(negative),
                "not a hexadecimal number",
            )
        })?;
        let v = if negative { -v } else { v };
        (v as f64, Some(v), 2 + n)
    } else {
        let mut n = digits_end(body, false);
        let mut fraction = false;
        if body[n..].starts_with('.') && body[n + 1..].starts_with(|c: char| c.is_ascii_digit()) {
            fraction = true;
            n += 1 + digits_end(&body[n + 1..], false);
        }
        let digits: String = body[..n].chars().filter(|c| *c != '_').collect();
        let v: f64 = digits
            .parse()
            .map_err(|_| SyntaxError::new(at, n, "not a number"))?;
        let v = if negative { -v } else { v };
        let int = if fraction {
            None
        } else {
            digits
                .parse::<i128>()
                .ok()
                .map(|i| if negative { -i } else { i })
        };
        (v, int, n)
    };
    let used = used + usize::from(negative);
    let unit_len = text[at + used..]
        .find(|c: char| !(c.is_ascii_alphabetic() || c == 'µ'))
        .unwrap_or(text.len() - at - used);
    let unit = (unit_len > 0).then(|| text[at + used..at + used + unit_len].to_string());
    Ok((Literal::Number { value, int, unit }, used + unit_len))
}

struct Parser {
    tokens: Vec<Spanned<Token>>,
    next: usize,
    depth: usize,
    tests: usize,
}

/// Parse an expression.
pub fn parse(text: &str) -> Result<Ast, SyntaxError> {
    if text.len() > MAX_TEXT {
        return Err(SyntaxError::new(
            0,
            0,
            format!("the expression is longer than {MAX_TEXT} bytes"),
        ));
    }
    let mut p = Parser {
        tokens: lex(text)?,
        next: 0,
        depth: 0,
        tests: 0,
    };
    if p.peek().item == Token::End {
        return Err(SyntaxError::new(
            0,
            0,
            "the expression is empty: expected a test such as `ErrorCode != 0`",
        ));
    }
    let ast = p.or()?;
    match &p.peek().item {
        Token::End => Ok(ast),
        Token::Close => Err(p.error_here("this `)` closes nothing")),
        t => {
            let t = describe(t);
            Err(p.error_here(format!("unexpected {t}: expected `and`, `or` or the end")))
        }
    }
}

impl Parser {
    fn peek(&self) -> &Spanned<Token> {
        let last = self.tokens.len() - 1;
        &self.tokens[self.next.min(last)]
    }

    fn bump(&mut self) -> Spanned<Token> {
        let t = self.peek().clone();
        if t.item != Token::End {
            self.next += 1;
        }
        t
    }

    fn error_here(&self, message: impl Into<String>) -> SyntaxError {
        let t = self.peek();
        SyntaxError::new(t.at, t.len, message)
    }

    fn or(&mut self) -> Result<Ast, SyntaxError> {
        let mut left = self.and()?;
        while self.peek().item == Token::Or {
            self.bump();
            let right = self.and()?;
            left = Ast::Or(Box::new(left), Box::new(right));
        }
        Ok(left)
    }

    fn and(&mut self) -> Result<Ast, SyntaxError> {
        let mut left = self.unary()?;
        while self.peek().item == Token::And {
            self.bump();
            let right = self.unary()?;
            left = Ast::And(Box::new(left), Box::new(right));
        }
        Ok(left)
    }

    fn unary(&mut self) -> Result<Ast, SyntaxError> {
        self.depth += 1;
        if self.depth > MAX_DEPTH {
            return Err(self.error_here(format!("nested deeper than {MAX_DEPTH} levels")));
        }
        let ast = match self.peek().item {
            Token::Not => {
                self.bump();
                Ast::Not(Box::new(self.unary()?))
            }
            Token::Open => {
                let open = self.bump();
                let inner = self.or()?;
                if self.peek().item != Token::Close {
                    let what = unexpected(&self.peek().item);
                    let mut e =
                        self.error_here(format!("{what}: expected `)` (the `(` is unclosed)"));
                    if self.peek().item == Token::End {
                        e.at = open.at;
                        e.len = 1;
                        e.message = "this `(` is never closed".into();
                    }
                    return Err(e);
                }
                self.bump();
                inner
            }
            _ => self.test()?,
        };
        self.depth -= 1;
        Ok(ast)
    }

    fn test(&mut self) -> Result<Ast, SyntaxError> {
        self.tests += 1;
        if self.tests > MAX_TESTS {
            return Err(self.error_here(format!("more than {MAX_TESTS} tests")));
        }
        let t = self.bump();
        let name = match t.item {
            Token::Name(n) => Spanned {
                at: t.at,
                len: t.len,
                item: n,
            },
            other => {
                return Err(SyntaxError::new(
                    t.at,
                    t.len,
                    format!(
                    "{}: expected a field or a fact (`ErrorCode`, `api`, `latency`), `not` or `(`",
                    unexpected(&other)
                ),
                ))
            }
        };
        let op = match self.peek().item {
            Token::Op(op) => {
                let t = self.bump();
                Spanned {
                    at: t.at,
                    len: t.len,
                    item: op,
                }
            }
            _ => {
                return Ok(Ast::Test {
                    name,
                    compare: None,
                })
            }
        };
        let values = if op.item == Op::In {
            if self.peek().item != Token::OpenSet {
                return Err(self.error_here("expected `{` after `in`: `in {a, b}`"));
            }
            self.bump();
            let mut values = vec![self.value()?];
            loop {
                match self.peek().item {
                    Token::CloseSet => {
                        self.bump();
                        break;
                    }
                    Token::Comma => {
                        self.bump();
                        values.push(self.value()?);
                    }
                    ref t => {
                        let t = unexpected(t);
                        return Err(self.error_here(format!("{t}: expected `,` or `}}`")));
                    }
                }
            }
            values
        } else {
            vec![self.value()?]
        };
        Ok(Ast::Test {
            name,
            compare: Some((op, values)),
        })
    }

    fn value(&mut self) -> Result<Spanned<Literal>, SyntaxError> {
        let t = self.bump();
        let item = match t.item {
            Token::Number(n) => n,
            Token::Str(s) => Literal::Str(s),
            Token::Name(n) => Literal::Name(n),
            other => {
                return Err(SyntaxError::new(
                    t.at,
                    t.len,
                    format!(
                        "{}: expected a value (a number, a \"string\" or a name)",
                        unexpected(&other)
                    ),
                ))
            }
        };
        Ok(Spanned {
            at: t.at,
            len: t.len,
            item,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn test(name: &str, op: Option<Op>, values: &[Literal]) -> Ast {
        Ast::Test {
            name: Spanned {
                at: 0,
                len: 0,
                item: name.into(),
            },
            compare: op.map(|o| {
                (
                    Spanned {
                        at: 0,
                        len: 0,
                        item: o,
                    },
                    values
                        .iter()
                        .map(|v| Spanned {
                            at: 0,
                            len: 0,
                            item: v.clone(),
                        })
                        .collect(),
                )
            }),
        }
    }

    /// The tree with every place zeroed, to compare shapes.
    fn shape(a: Ast) -> Ast {
        match a {
            Ast::And(l, r) => Ast::And(Box::new(shape(*l)), Box::new(shape(*r))),
            Ast::Or(l, r) => Ast::Or(Box::new(shape(*l)), Box::new(shape(*r))),
            Ast::Not(x) => Ast::Not(Box::new(shape(*x))),
            Ast::Test { name, compare } => Ast::Test {
                name: Spanned {
                    at: 0,
                    len: 0,
                    ..name
                },
                compare: compare.map(|(o, v)| {
                    (
                        Spanned { at: 0, len: 0, ..o },
                        v.into_iter()
                            .map(|v| Spanned { at: 0, len: 0, ..v })
                            .collect(),
                    )
                }),
            },
        }
    }

    fn int(i: i128) -> Literal {
        Literal::Number {
            value: i as f64,
            int: Some(i),
            unit: None,
        }
    }

    #[test]
    fn and_binds_tighter_than_or_and_not_tighter_than_and() {
        let a = shape(parse("not a or b and c").unwrap());
        let t = |n: &str| test(n, None, &[]);
        assert_eq!(
            a,
            Ast::Or(
                Box::new(Ast::Not(Box::new(t("a")))),
                Box::new(Ast::And(Box::new(t("b")), Box::new(t("c"))))
            )
        );
        let b = shape(parse("!(a || b) && c").unwrap());
        assert_eq!(
            b,
            Ast::And(
                Box::new(Ast::Not(Box::new(Ast::Or(
                    Box::new(t("a")),
                    Box::new(t("b"))
                )))),
                Box::new(t("c"))
            )
        );
    }

    #[test]
    fn each_operator_and_value_form_reads() {
        for (text, op) in [
            ("==", Op::Eq),
            ("=", Op::Eq),
            ("!=", Op::Ne),
            ("<", Op::Lt),
            ("<=", Op::Le),
            (">", Op::Gt),
            (">=", Op::Ge),
            ("contains", Op::Contains),
            ("matches", Op::Matches),
        ] {
            let a = shape(parse(&format!("ErrorCode {text} -7")).unwrap());
            assert_eq!(a, test("ErrorCode", Some(op), &[int(-7)]), "{text}");
        }
        assert_eq!(
            shape(parse("api in {Produce, 1,\"x\\x41\\\"\"}").unwrap()),
            test(
                "api",
                Some(Op::In),
                &[
                    Literal::Name("Produce".into()),
                    int(1),
                    Literal::Str(b"xA\"".to_vec())
                ]
            )
        );
        assert_eq!(
            shape(parse("latency > 2.5ms").unwrap()),
            test(
                "latency",
                Some(Op::Gt),
                &[Literal::Number {
                    value: 2.5,
                    int: None,
                    unit: Some("ms".into())
                }]
            )
        );
        assert_eq!(
            shape(parse("x == 0x1F").unwrap()),
            test("x", Some(Op::Eq), &[int(31)])
        );
        assert_eq!(
            shape(parse("body.Topics.Name == orders-7").unwrap()),
            test(
                "body.Topics.Name",
                Some(Op::Eq),
                &[Literal::Name("orders-7".into())]
            )
        );
    }

    #[test]
    fn places_are_byte_offsets() {
        let Ast::Test { name, compare } = parse("  ErrorCode  != 79").unwrap() else {
            panic!()
        };
        assert_eq!((name.at, name.len), (2, 9));
        let (op, v) = compare.unwrap();
        assert_eq!((op.at, op.len), (13, 2));
        assert_eq!((v[0].at, v[0].len), (16, 2));
    }

    #[test]
    fn errors_point_at_the_place_and_say_what_was_expected() {
        let cases: &[(&str, usize, &str)] = &[
            ("", 0, "empty"),
            ("ErrorCode !=", 12, "expected a value"),
            ("a and", 5, "expected a field or a fact"),
            ("(a or b", 0, "never closed"),
            ("a) ", 1, "closes nothing"),
            ("a b", 2, "expected `and`, `or` or the end"),
            ("x == \"abc", 5, "no closing quote"),
            ("x == \"\\q\"", 6, "unknown escape"),
            ("x == 3 # y", 7, "unexpected"),
            ("api in Produce", 7, "expected `{`"),
            ("api in {}", 8, "expected a value"),
            ("api in {Produce Fetch}", 16, "expected `,` or `}`"),
            ("api in {Produce,}", 16, "expected a value"),
            ("conn == 1 2", 10, "unexpected number: expected `and`"),
            ("conn == 1 \"x\"", 10, "unexpected string: expected `and`"),
        ];
        for (text, at, says) in cases {
            let e = parse(text).unwrap_err();
            assert_eq!(e.at, *at, "{text}: {e:?}");
            assert!(e.message.contains(says), "{text}: {}", e.message);
        }
        let shown = parse("ErrorCode == == 1")
            .unwrap_err()
            .show("ErrorCode == == 1");
        assert_eq!(
            shown,
            "unexpected `==`: expected a value (a number, a \"string\" or a name)\n  ErrorCode == == 1\n               ^^"
        );
    }

    #[test]
    fn hostile_text_is_refused_not_overflowed() {
        let deep = "(".repeat(100_000);
        assert!(parse(&deep).is_err());
        let nested = format!(
            "{}a{}",
            "(".repeat(MAX_DEPTH + 1),
            ")".repeat(MAX_DEPTH + 1)
        );
        assert!(parse(&nested).unwrap_err().message.contains("nested"));
        let nots = format!("{}a", "not ".repeat(1000));
        assert!(parse(&nots).is_err());
        assert!(parse("x == 99999999999999999999999999999999999999999999").is_ok());
        assert!(parse("é").is_err());
        let chain = |n: usize| vec!["a == 1"; n].join(" or ");
        assert!(parse(&chain(MAX_TESTS)).is_ok());
        let e = parse(&chain(MAX_TESTS + 1)).unwrap_err();
        assert_eq!(
            (e.at, e.message.as_str()),
            (MAX_TESTS * 10, "more than 1024 tests")
        );
    }
}
