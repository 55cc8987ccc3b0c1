//! One table model rendered as aligned plain text or as GitHub Markdown, shared by every
//! tabular output so that each exporter is a few lines.

/// Column alignment.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Align {
    /// Text.
    Left,
    /// Numbers.
    Right,
}

/// A header row plus body rows of strings.
#[derive(Debug, Clone, Default)]
pub struct Table {
    headers: Vec<(String, Align)>,
    rows: Vec<Vec<String>>,
}

impl Table {
    /// A table with these columns.
    pub fn new<S: Into<String>>(headers: impl IntoIterator<Item = (S, Align)>) -> Table {
        Table {
            headers: headers.into_iter().map(|(h, a)| (h.into(), a)).collect(),
            rows: Vec::new(),
        }
    }

    /// Adds columns after the existing ones (before any row is pushed).
    pub fn add_columns<S: Into<String>>(&mut self, headers: impl IntoIterator<Item = (S, Align)>) {
        self.headers
            .extend(headers.into_iter().map(|(h, a)| (h.into(), a)));
    }

    /// Adds a row (missing cells are empty, extra cells are dropped).
    pub fn push(&mut self, mut row: Vec<String>) {
        row.resize(self.headers.len(), String::new());
        self.rows.push(row);
    }

    fn widths(&self) -> Vec<usize> {
        self.headers
            .iter()
            .enumerate()
            .map(|(i, (h, _))| {
                self.rows
                    .iter()
                    .map(|r| r[i].chars().count())
                    .chain([h.chars().count()])
                    .max()
                    .unwrap_or(0)
            })
            .collect()
    }

    fn pad(text: &str, width: usize, align: Align) -> String {
        match align {
            Align::Left => format!("{text:<width$}"),
            Align::Right => format!("{text:>width$}"),
        }
    }

    /// Columns separated by two spaces, no trailing blanks.
    pub fn to_plain(&self) -> String {
        let widths = self.widths();
        let line = |cells: Vec<&str>| {
            let parts: Vec<String> = cells
                .iter()
                .zip(&self.headers)
                .zip(&widths)
                .map(|((c, (_, a)), w)| Table::pad(c, *w, *a))
                .collect();
            parts.join("  ").trim_end().to_string() + "\n"
        };
        let mut out = line(self.headers.iter().map(|(h, _)| h.as_str()).collect());
        for row in &self.rows {
            out += &line(row.iter().map(String::as_str).collect());
        }
        out
    }

    /// A GitHub-flavoured Markdown table; `|` in cells is escaped.
    pub fn to_markdown(&self) -> String {
        let escaped = Table {
            headers: self
                .headers
                .iter()
                .map(|(h, a)| (h.replace('|', "\\|"), *a))
                .collect(),
            rows: self
                .rows
                .iter()
                .map(|r| r.iter().map(|c| c.replace('|', "\\|")).collect())
                .collect(),
        };
        // A separator needs three characters, so no column is narrower.
        let widths: Vec<usize> = escaped.widths().into_iter().map(|w| w.max(3)).collect();
        let line = |cells: &[String]| {
            let padded: Vec<String> = cells
                .iter()
                .zip(&escaped.headers)
                .zip(&widths)
                .map(|((c, (_, a)), w)| Table::pad(c, *w, *a))
                .collect();
            format!("| {} |\n", padded.join(" | "))
        };
        let header: Vec<String> = escaped.headers.iter().map(|(h, _)| h.clone()).collect();
        let mut out = line(&header);
        let rule: Vec<String> = escaped
            .headers
            .iter()
            .zip(&widths)
            .map(|((_, a), w)| match a {
                Align::Left => "-".repeat(*w),
                Align::Right => format!("{}:", "-".repeat(w - 1)),
            })
            .collect();
        out += &format!("| {} |\n", rule.join(" | "));
        for row in &escaped.rows {
            out += &line(row);
        }
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn plain_and_markdown_align_columns() {
        let mut t = Table::new([("name", Align::Left), ("n", Align::Right)]);
        t.push(vec!["json".into(), "12".into()]);
        t.push(vec!["a|b".into(), "3".into()]);
        assert_eq!(t.to_plain(), "name   n\njson  12\na|b    3\n");
        assert_eq!(
            t.to_markdown(),
            "| name |   n |\n| ---- | --: |\n| json |  12 |\n| a\\|b |   3 |\n"
        );
    }
}
