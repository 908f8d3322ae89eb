//! A text table: columns padded to their widest cell, and made to fit a
//! width by leaving out the columns a view can spare, in the order it
//! names them (stats leaves out `mean` before `p99`); what still does not
//! fit is cut at the line's end ([`super::width::FitLines`]).

use super::width::display_width;

/// Rows of cells, the first the heads.
pub struct Table {
    pub rows: Vec<Vec<String>>,
    /// The first `left` columns and the last are aligned left, the others
    /// (numbers) right.
    pub left: usize,
    /// Columns that may be left out to fit, the first to go first.
    pub spare: Vec<usize>,
}

impl Table {
    /// The table in lines of at most `columns` where leaving columns out
    /// does it (`None`: every column); returns the heads left out.
    pub fn render(&self, columns: Option<usize>, out: &mut String) -> Vec<String> {
        let count = self.rows.first().map_or(0, Vec::len);
        let mut widths = vec![0; count];
        for row in &self.rows {
            for (w, cell) in widths.iter_mut().zip(row) {
                *w = (*w).max(display_width(cell.as_bytes()));
            }
        }
        let mut shown = vec![true; count];
        let total = |shown: &[bool]| -> usize {
            let cells: Vec<usize> = (0..count)
                .filter(|&i| shown[i])
                .map(|i| widths[i])
                .collect();
            cells.iter().sum::<usize>() + 2 * cells.len().saturating_sub(1)
        };
        if let Some(columns) = columns {
            for &i in &self.spare {
                if total(&shown) <= columns {
                    break;
                }
                if i < count {
                    shown[i] = false;
                }
            }
        }
        for row in &self.rows {
            let mut line = String::new();
            let mut first = true;
            for (i, (cell, &w)) in row.iter().zip(&widths).enumerate() {
                if !shown[i] {
                    continue;
                }
                if !first {
                    line.push_str("  ");
                }
                first = false;
                let pad = w - display_width(cell.as_bytes());
                let last = i + 1 == count;
                if i < self.left || last {
                    line.push_str(cell);
                    line.extend(std::iter::repeat_n(' ', pad));
                } else {
                    line.extend(std::iter::repeat_n(' ', pad));
                    line.push_str(cell);
                }
            }
            out.push_str(line.trim_end());
            out.push('\n');
        }
        (0..count)
            .filter(|&i| !shown[i])
            .filter_map(|i| self.rows.first().and_then(|h| h.get(i)).cloned())
            .collect()
    }
}

/// The line that says which columns were left out to fit (empty: none).
pub(crate) fn hidden_line(hidden: &[String], columns: Option<usize>) -> String {
    match (hidden.is_empty(), columns) {
        (false, Some(c)) => format!(
            "(left out to fit {c} columns: {}; --wide shows them)\n",
            hidden.join(", ")
        ),
        _ => String::new(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn table() -> Table {
        let row = |cells: &[&str]| cells.iter().map(|c| c.to_string()).collect();
        Table {
            rows: vec![
                row(&["api", "requests", "p50", "mean", "errors"]),
                row(&["Produce", "5", "0.17 ms", "0.36 ms", "-"]),
                row(&["Metadata", "12", "0.11 ms", "0.19 ms", "NOT_LEADER=2"]),
            ],
            left: 1,
            spare: vec![3, 2],
        }
    }

    #[test]
    fn names_and_the_last_column_align_left_and_numbers_right() {
        let mut out = String::new();
        assert!(table().render(None, &mut out).is_empty());
        assert_eq!(
            out,
            "api       requests      p50     mean  errors\n\
             Produce          5  0.17 ms  0.36 ms  -\n\
             Metadata        12  0.11 ms  0.19 ms  NOT_LEADER=2\n"
        );
    }

    #[test]
    fn columns_a_view_can_spare_go_first_until_the_rest_fits() {
        let mut out = String::new();
        let hidden = table().render(Some(41), &mut out);
        assert_eq!(hidden, ["mean"]);
        assert_eq!(
            out.lines().next(),
            Some("api       requests      p50  errors")
        );
        assert!(out.lines().all(|l| l.len() <= 41), "{out}");
        // One column short of room: the next to go goes too.
        let mut out = String::new();
        assert_eq!(table().render(Some(40), &mut out), ["p50", "mean"]);
        assert_eq!(
            hidden_line(&["p50".into(), "mean".into()], Some(40)),
            "(left out to fit 40 columns: p50, mean; --wide shows them)\n"
        );
    }
}
