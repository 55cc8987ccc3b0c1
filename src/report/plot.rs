//! SVG plots with plotters: per-metric rates with CI bars per arm, and weekly trend
//! lines. Text is written as SVG `<text>` elements (plotters' built-in font estimate,
//! no system fonts needed), so the viewer renders the labels.

use std::path::Path;

use plotters::coord::ranged1d::{SegmentValue, SegmentedCoord};
use plotters::coord::types::{RangedCoordf64, RangedCoordusize};
use plotters::prelude::*;

use super::summary_data::Summary;
use crate::error::{Error, Result};
use crate::fsutil::write_atomic;
use crate::rates::{FEATURES_VERIFIED, Metric};

/// A point estimate with its interval.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Estimate {
    /// The estimate (rate or mean).
    pub value: f64,
    /// Lower interval bound.
    pub low: f64,
    /// Upper interval bound.
    pub high: f64,
}

/// How the y axis is labelled.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum YAxis {
    /// Rates in [0, 1], shown as percentages.
    Rate,
    /// Plain numbers (means of counts).
    Count,
}

impl YAxis {
    fn label(self, y: f64) -> String {
        match self {
            YAxis::Rate => format!("{:.0}%", y * 100.0),
            YAxis::Count => format!("{y:.1}"),
        }
    }

    fn top(self, highest: f64) -> f64 {
        match self {
            YAxis::Rate => (highest * 1.15).clamp(0.05, 1.0),
            YAxis::Count => (highest * 1.15).max(1.0),
        }
    }
}

/// Series colours, chosen to stay distinguishable for common colour blindness.
const COLORS: [RGBColor; 8] = [
    RGBColor(31, 119, 180),
    RGBColor(255, 127, 14),
    RGBColor(44, 160, 44),
    RGBColor(214, 39, 40),
    RGBColor(148, 103, 189),
    RGBColor(140, 86, 75),
    RGBColor(227, 119, 194),
    RGBColor(127, 127, 127),
];

const SIZE: (u32, u32) = (720, 420);
const FONT: &str = "sans-serif";

fn draw_error(e: impl std::fmt::Display) -> Error {
    Error::Tool(format!("cannot draw a plot: {e}"))
}

fn center(i: usize) -> SegmentValue<usize> {
    SegmentValue::CenterOf(i)
}

type Chart<'a, DB> =
    ChartContext<'a, DB, Cartesian2d<SegmentedCoord<RangedCoordusize>, RangedCoordf64>>;

/// The frame both charts share: a title, one x slot per category, a y axis from 0 to
/// `top`.
struct Axes<'t> {
    title: &'t str,
    categories: &'t [String],
    top: f64,
    y_axis: YAxis,
    x_desc: &'t str,
    y_desc: &'t str,
}

impl Axes<'_> {
    /// Builds the chart on `root` and draws its mesh and axis labels.
    fn draw<'a, DB: DrawingBackend>(
        &self,
        root: &'a DrawingArea<DB, plotters::coord::Shift>,
    ) -> Result<Chart<'a, DB>> {
        let mut chart = ChartBuilder::on(root)
            .caption(self.title, (FONT, 20))
            .margin(12)
            .x_label_area_size(44)
            .y_label_area_size(64)
            // A usize range is inclusive here: 0..n-1 holds n categories.
            .build_cartesian_2d(
                (0..self.categories.len().saturating_sub(1)).into_segmented(),
                0.0..self.top,
            )
            .map_err(draw_error)?;
        let x_label = |v: &SegmentValue<usize>| match v {
            SegmentValue::CenterOf(i) => self.categories.get(*i).cloned().unwrap_or_default(),
            _ => String::new(),
        };
        let y_label = |y: &f64| self.y_axis.label(*y);
        chart
            .configure_mesh()
            .disable_x_mesh()
            .x_labels(self.categories.len().max(1))
            .x_label_formatter(&x_label)
            .y_label_formatter(&y_label)
            .x_desc(self.x_desc)
            .y_desc(self.y_desc)
            .label_style((FONT, 14))
            .axis_desc_style((FONT, 15))
            .draw()
            .map_err(draw_error)?;
        Ok(chart)
    }
}

/// Draws an error bar from `low` to `high` at category `i`, with 12-pixel caps.
fn error_bar<DB: DrawingBackend>(
    chart: &mut Chart<'_, DB>,
    i: usize,
    e: Estimate,
    color: RGBColor,
) -> Result<()> {
    let style = color.stroke_width(2);
    chart
        .draw_series([PathElement::new(
            vec![(center(i), e.low), (center(i), e.high)],
            style,
        )])
        .map_err(draw_error)?;
    for y in [e.low, e.high] {
        chart
            .draw_series([
                EmptyElement::at((center(i), y)) + PathElement::new(vec![(-6, 0), (6, 0)], style)
            ])
            .map_err(draw_error)?;
    }
    Ok(())
}

/// One point with its interval per category (arm): an SVG document.
pub fn rate_chart(
    title: &str,
    categories: &[String],
    estimates: &[Option<Estimate>],
    y_axis: YAxis,
    y_desc: &str,
) -> Result<String> {
    let mut svg = String::new();
    {
        let root = SVGBackend::with_string(&mut svg, SIZE).into_drawing_area();
        root.fill(&WHITE).map_err(draw_error)?;
        let highest = estimates
            .iter()
            .flatten()
            .map(|e| e.high)
            .fold(0.0, f64::max);
        let axes = Axes {
            title,
            categories,
            top: y_axis.top(highest),
            y_axis,
            x_desc: "arm",
            y_desc,
        };
        let mut chart = axes.draw(&root)?;
        for (i, e) in estimates.iter().enumerate() {
            let Some(e) = *e else { continue };
            let color = COLORS[i % COLORS.len()];
            error_bar(&mut chart, i, e, color)?;
            chart
                .draw_series([Circle::new((center(i), e.value), 5, color.filled())])
                .map_err(draw_error)?;
        }
        root.present().map_err(draw_error)?;
    }
    Ok(svg)
}

/// One line per series (arm) over the categories (weeks), with interval bars.
pub fn trend_chart(
    title: &str,
    weeks: &[String],
    series: &[(String, Vec<Option<Estimate>>)],
    y_axis: YAxis,
    y_desc: &str,
) -> Result<String> {
    let mut svg = String::new();
    {
        let root = SVGBackend::with_string(&mut svg, SIZE).into_drawing_area();
        root.fill(&WHITE).map_err(draw_error)?;
        let highest = series
            .iter()
            .flat_map(|(_, points)| points.iter().flatten())
            .map(|e| e.high)
            .fold(0.0, f64::max);
        let axes = Axes {
            title,
            categories: weeks,
            // Headroom for the legend in the upper right corner.
            top: y_axis.top(highest * 1.25),
            y_axis,
            x_desc: "ISO week",
            y_desc,
        };
        let mut chart = axes.draw(&root)?;
        for (s, (name, points)) in series.iter().enumerate() {
            let color = COLORS[s % COLORS.len()];
            let line: Vec<(SegmentValue<usize>, f64)> = points
                .iter()
                .enumerate()
                .filter_map(|(i, e)| e.map(|e| (center(i), e.value)))
                .collect();
            chart
                .draw_series(LineSeries::new(line.clone(), color.stroke_width(2)))
                .map_err(draw_error)?
                .label(name.as_str())
                .legend(move |(x, y)| {
                    PathElement::new(vec![(x, y), (x + 18, y)], color.stroke_width(2))
                });
            chart
                .draw_series(
                    line.iter()
                        .map(|p| Circle::new(p.clone(), 4, color.filled())),
                )
                .map_err(draw_error)?;
            for (i, e) in points.iter().enumerate() {
                if let Some(e) = *e {
                    error_bar(&mut chart, i, e, color)?;
                }
            }
        }
        chart
            .configure_series_labels()
            .position(SeriesLabelPosition::UpperRight)
            .label_font((FONT, 14))
            .background_style(WHITE.mix(0.85))
            .border_style(BLACK)
            .draw()
            .map_err(draw_error)?;
        root.present().map_err(draw_error)?;
    }
    Ok(svg)
}

/// Writes `plots/<metric>.svg` for every rate metric and for `features_verified`.
pub fn write_summary_plots(summary: &Summary, dir: &Path) -> Result<()> {
    let estimate = |row: &super::summary_data::SummaryRow| match (row.rate, row.ci_low, row.ci_high)
    {
        (Some(value), Some(low), Some(high)) => Some(Estimate { value, low, high }),
        (Some(value), _, _) => Some(Estimate {
            value,
            low: value,
            high: value,
        }),
        _ => None,
    };
    let conf = super::format::level(summary.confidence);
    let metrics = Metric::ALL
        .map(|m| (m.name(), YAxis::Rate, format!("rate ({conf} Wilson CI)")))
        .into_iter()
        .chain([(
            FEATURES_VERIFIED,
            YAxis::Count,
            format!("mean per trial ({conf} CI)"),
        )]);
    for (name, y_axis, y_desc) in metrics {
        let rows: Vec<_> = summary.metric_rows(name).collect();
        let arms: Vec<String> = rows.iter().map(|r| r.arm.clone()).collect();
        let estimates: Vec<Option<Estimate>> = rows.iter().map(|r| estimate(r)).collect();
        let svg = rate_chart(name, &arms, &estimates, y_axis, &y_desc)?;
        write_atomic(&dir.join(format!("{name}.svg")), svg.as_bytes())?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn e(value: f64) -> Option<Estimate> {
        Some(Estimate {
            value,
            low: value - 0.02,
            high: value + 0.03,
        })
    }

    /// The text of every `<text>` element, trimmed.
    fn texts(svg: &str) -> Vec<String> {
        let doc = roxmltree::Document::parse(svg).unwrap();
        doc.descendants()
            .filter(|n| n.has_tag_name("text"))
            .filter_map(|n| n.text())
            .map(|t| t.trim().to_string())
            .collect()
    }

    #[test]
    fn a_rate_chart_holds_its_arm_names_and_percent_labels_as_text() {
        let arms = vec!["json".to_string(), "markdown".to_string()];
        let svg = rate_chart(
            "premature_done",
            &arms,
            &[e(0.09), e(0.18)],
            YAxis::Rate,
            "rate",
        )
        .unwrap();
        assert!(svg.starts_with("<svg"), "{}", &svg[..40]);
        let texts = texts(&svg);
        for text in ["json", "markdown", "premature_done", "arm", "rate", "10%"] {
            assert!(
                texts.iter().any(|t| t == text),
                "missing {text} in {texts:?}"
            );
        }
    }

    #[test]
    fn a_trend_chart_has_a_legend_entry_per_arm_and_a_label_per_week() {
        let weeks = vec!["2026-W40".to_string(), "2026-W41".to_string()];
        let series = vec![
            ("json".to_string(), vec![e(0.1), e(0.12)]),
            ("yaml".to_string(), vec![None, e(0.2)]),
        ];
        let svg = trend_chart("told_false", &weeks, &series, YAxis::Rate, "rate").unwrap();
        let texts = texts(&svg);
        for text in ["json", "yaml", "2026-W40", "2026-W41", "ISO week"] {
            assert!(
                texts.iter().any(|t| t == text),
                "missing {text} in {texts:?}"
            );
        }
    }

    #[test]
    fn the_same_input_draws_the_same_bytes() {
        let arms = vec!["a".to_string()];
        let one = rate_chart("m", &arms, &[e(0.5)], YAxis::Rate, "rate").unwrap();
        let two = rate_chart("m", &arms, &[e(0.5)], YAxis::Rate, "rate").unwrap();
        assert_eq!(one, two);
    }
}
