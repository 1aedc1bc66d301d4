//! The Scaling view: pick workloads (several at once), see weak and strong scaling side by side —
//! speedup on a log scale (or efficiency in %) against log₂ GPUs, so measured points at 1–8 GPUs
//! read beside the projection to 1024; the step-time breakdown (compute / exposed communication
//! / other) as stacked bars; and a table with step time, samples/s, speedup, efficiency and memory
//! at every measured GPU count and at the chosen one, measured and modeled side by side with the
//! error. Modeled figures are dashed lines (dotted beyond the box, where they are projected over
//! nodes); real framework runs are filled circles, proxies hollow squares. Rows that do not fit
//! the GPU's memory say so instead of a throughput. Modeling is arithmetic and runs in `ui()`;
//! measuring runs on a worker thread.

use std::collections::BTreeSet;

use eframe::egui::{self, Color32, RichText, Ui};
use egui_plot::{Bar, BarChart, GridMark, Line, LineStyle, MarkerShape, Plot, PlotPoints, Points};

use crate::model::{Source, Topology};
use crate::report::{Report, ScalingSection};
use crate::scaling::calibrate::{MeasuredStep, UnderDdp};
use crate::scaling::machine::Bound;
use crate::scaling::run::{MeasureOptions, ScalingRun, measured_rows, run_modeled};
use crate::scaling::workload::{self, ComputeDtype, Pattern, Workload};
use crate::scaling::{Mode, RowSource, ScalingPoint};
use crate::ui::job_panel::{JobPanel, Progress, modeled_line};
use crate::ui::jobs::SharedRunner;
use crate::ui::palette;

/// Default projection limit of the view (GPUs).
const VIEW_MAX_GPUS: usize = 64;

/// The custom-workload form's text fields.
#[derive(Clone, Debug)]
pub struct WorkloadForm {
    pub name: String,
    pub pattern: Pattern,
    pub params: String,
    pub flops_per_sample: String,
    pub per_gpu_batch: String,
    pub strong_global_batch: String,
    pub bucket_mb: String,
    pub utilization: String,
    pub overlap: String,
    pub input_bytes: String,
    pub output_bytes: String,
    pub link_gbps: String,
    /// Your own 1-GPU step at the per-GPU batch, ms (calibrates the compute term); empty: none.
    pub step_ms_1gpu: String,
    pub error: Option<String>,
}

impl Default for WorkloadForm {
    fn default() -> Self {
        Self {
            name: "my-model".into(),
            pattern: Pattern::DdpRing,
            params: "1e9".into(),
            flops_per_sample: "6e12".into(),
            per_gpu_batch: "8".into(),
            strong_global_batch: "64".into(),
            bucket_mb: "25".into(),
            utilization: "0.5".into(),
            overlap: "0.8".into(),
            input_bytes: String::new(),
            output_bytes: String::new(),
            link_gbps: String::new(),
            step_ms_1gpu: String::new(),
            error: None,
        }
    }
}

impl WorkloadForm {
    /// The workload the form describes, validated; Err names the field.
    pub fn build(&self) -> Result<Workload, String> {
        let num = |field: &str, s: &str| -> Result<f64, String> {
            s.trim()
                .parse::<f64>()
                .map_err(|_| format!("{field}: {s:?} is not a number"))
        };
        let opt = |field: &str, s: &str| -> Result<Option<f64>, String> {
            if s.trim().is_empty() {
                Ok(None)
            } else {
                num(field, s).map(Some)
            }
        };
        let w = Workload {
            name: self.name.trim().to_string(),
            title: format!("{} (custom)", self.name.trim()),
            pattern: self.pattern,
            params: num("params", &self.params)?,
            grad_dtype: crate::model::Dtype::Bf16,
            compute_dtype: ComputeDtype::Bf16,
            flops_per_sample: num("FLOPs per sample", &self.flops_per_sample)?,
            per_gpu_batch: num("per-GPU batch", &self.per_gpu_batch)?,
            strong_global_batch: num("strong global batch", &self.strong_global_batch)?,
            bucket_bytes: num("bucket MB", &self.bucket_mb)? * 1048576.0,
            utilization: num("utilization", &self.utilization)?,
            overlap: num("overlap", &self.overlap)?,
            sample_input_bytes: opt("input bytes", &self.input_bytes)?,
            sample_output_bytes: opt("output bytes", &self.output_bytes)?,
            sync_bytes: opt("output bytes", &self.output_bytes)?,
            primary_ms: None,
            frame_hz: None,
            link_gbps: opt("link GB/s", &self.link_gbps)?,
            offered_load: None,
            rtt_ms: None,
            steps_per_sync: None,
            optimizer: None,
            weight_bytes: None,
            micro_batch: None,
            activation_bytes_per_sample: None,
            step_ms_1gpu: opt("1-GPU step ms", &self.step_ms_1gpu)?,
            cuda_graphs: false,
            model: None,
            sources: vec!["user-entered in the Scaling view (assumed)".into()],
            calibration: Vec::new(),
            power: Vec::new(),
        };
        workload::validate(&w).map_err(|(f, why)| format!("{f}: {why}"))?;
        if let Some(ms) = w.step_ms_1gpu {
            crate::scaling::rates::possible_step(&w, ms)
                .map_err(|why| format!("1-GPU step ms: {why}"))?;
        }
        Ok(w)
    }
}

/// What the first plot of each mode shows.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum YAxis {
    /// Speedup on a log₂ scale, with the ideal line.
    Speedup,
    /// Efficiency in %.
    Efficiency,
}

/// State of the Scaling view on one source: the workloads offered and chosen, how the plots
/// read, the model of this machine for the choice, and the measurement in flight.
///
/// On this machine, a server, a catalog or an imported machine, the view models the chosen
/// workloads itself (arithmetic, in `ui()`) and measured rows come from a job; both become the
/// source report's scaling section, which is what the view draws and what saving writes. On an
/// opened report the view draws the report's own section as it is (`fixed`).
pub struct ScalingView {
    panel: JobPanel<ScalingSection>,
    workloads: Vec<Workload>,
    selected: BTreeSet<String>,
    max_gpus: usize,
    /// The modeled run for the current selection (recomputed when it changes).
    modeled: Option<ScalingRun>,
    modeled_key: String,
    /// The measured rows of the last measurement.
    measured: Option<ScalingRun>,
    /// The custom-workload form.
    pub form: WorkloadForm,
    /// Drawing a report's own section: the model is not recomputed.
    fixed: bool,
    /// Speedup (log) or efficiency (%).
    pub y_axis: YAxis,
    /// The "your 1-GPU step" fields, per workload, as typed.
    calibration_text: std::collections::BTreeMap<String, String>,
}

impl Default for ScalingView {
    fn default() -> Self {
        Self {
            panel: JobPanel::default(),
            workloads: workload::catalog(),
            selected: ["resnet50".to_string()].into_iter().collect(),
            max_gpus: VIEW_MAX_GPUS,
            modeled: None,
            modeled_key: String::new(),
            measured: None,
            form: WorkloadForm::default(),
            fixed: false,
            y_axis: YAxis::Speedup,
            calibration_text: Default::default(),
        }
    }
}

impl ScalingView {
    /// Says where measurements go: this machine or a server (with its connection and name),
    /// or nowhere (an opened report: `this_machine` false).
    pub fn set_machine(&mut self, this_machine: bool, runner: Option<(SharedRunner, String)>) {
        self.panel.set_machine(this_machine, runner);
    }

    /// A view with these workloads selected (for screenshots and tests).
    pub fn with_selection(names: &[&str]) -> Self {
        Self {
            selected: names.iter().map(|s| s.to_string()).collect(),
            ..Self::default()
        }
    }

    /// The view of an opened report: its scaling section drawn as it was produced (its model
    /// rows, fed by whatever curve and rates the run used, and its measured rows), the first
    /// `show` of its workloads selected.
    pub fn for_report(report: &Report, show: usize) -> Self {
        let mut v = Self {
            fixed: true,
            ..Self::default()
        };
        let Some(run) = report.scaling.as_ref().map(|s| &s.run) else {
            return v;
        };
        for w in &run.workloads {
            v.workloads.retain(|x| x.name != w.name);
            v.workloads.push(w.clone());
        }
        v.selected = run
            .workloads
            .iter()
            .take(show.max(1))
            .map(|w| w.name.clone())
            .collect();
        v.max_gpus = run
            .rows
            .iter()
            .map(|r| r.n_gpus)
            .max()
            .unwrap_or(VIEW_MAX_GPUS)
            .min(VIEW_MAX_GPUS.max(8));
        v
    }

    /// The most GPUs modeled and drawn: the choice, and never fewer than the machine has (a
    /// 72-GPU rack is not cut at 64).
    fn shown_max(&self, topology: &Topology) -> usize {
        self.max_gpus.max(topology.gpus.len())
    }

    /// The selected workload names.
    pub fn selected(&self) -> &BTreeSet<String> {
        &self.selected
    }

    /// Every workload the view offers (catalog + custom).
    pub fn workloads(&self) -> &[Workload] {
        &self.workloads
    }

    /// True while a measurement runs.
    pub fn running(&self) -> bool {
        self.panel.running()
    }

    /// Adds the form's workload and selects it; the form shows why when it is invalid.
    pub fn add_from_form(&mut self) {
        match self.form.build() {
            Ok(w) => {
                self.workloads.retain(|x| x.name != w.name);
                self.selected.insert(w.name.clone());
                self.workloads.push(w);
                self.form.error = None;
                self.modeled_key.clear();
            }
            Err(e) => self.form.error = Some(e),
        }
    }

    /// Takes the measured rows the measurement in flight delivered into `report`'s section.
    pub fn poll(&mut self, report: &mut Report) {
        if let Some(r) = self.panel.poll_report() {
            self.measured = Some(measured_only(&r.scaling.map(|s| s.run).unwrap_or_default()));
            self.write_section(report);
        }
    }

    /// Models the chosen workloads on `report`'s machine when the choice changed, and writes
    /// the section.
    fn refresh_model(&mut self, report: &mut Report) {
        if self.fixed {
            return;
        }
        let topology = &report.topology;
        let max_gpus = self.shown_max(topology);
        let key = format!(
            "{}|{:?}|{}|{}",
            topology.source.label(),
            self.selected,
            max_gpus,
            self.workloads.len()
        );
        if key == self.modeled_key && !self.modeled_key.is_empty() {
            return;
        }
        self.modeled_key = key;
        self.modeled = Some(run_modeled(
            topology,
            &[],
            &self.chosen(),
            &Mode::ALL,
            max_gpus,
        ));
        self.write_section(report);
    }

    /// The section of what the view shows now (selected workloads only): the model, then the
    /// measured rows.
    fn write_section(&self, report: &mut Report) {
        let base = self.modeled.clone().unwrap_or_default();
        let mut notes = base.notes.clone();
        let mut rows = base.rows;
        if let Some(m) = &self.measured {
            notes.extend(m.notes.iter().cloned());
            rows.extend(m.rows.iter().cloned());
        }
        rows.retain(|r| self.selected.contains(&r.workload));
        let source = if rows.iter().all(|r| r.source == RowSource::Modeled) {
            Source::Modeled
        } else {
            Source::Measured
        };
        report.scaling = Some(ScalingSection {
            source,
            run: ScalingRun {
                machine: base.machine,
                workloads: self.chosen(),
                rows,
                notes,
                framework: self.measured.as_ref().and_then(|m| m.framework.clone()),
                pricing: None,
                power_rule: crate::scaling::power::PowerRule::default(),
            },
        });
    }

    /// The selected workloads, in the order offered.
    fn chosen(&self) -> Vec<Workload> {
        self.workloads
            .iter()
            .filter(|w| self.selected.contains(&w.name))
            .cloned()
            .collect()
    }

    /// Notes to list under the plots: a report's, or what the measurement noted (the model's
    /// own notes say what the header line already does).
    fn notes<'a>(&'a self, section: Option<&'a ScalingSection>) -> &'a [String] {
        if self.fixed {
            section.map_or(&[], |s| &s.run.notes)
        } else {
            self.measured.as_ref().map_or(&[], |m| &m.notes)
        }
    }

    /// Draws the view of `report`'s machine, modeling the chosen workloads into its scaling
    /// section first (unless it is a report's own).
    pub fn ui(&mut self, ui: &mut Ui, report: &mut Report) {
        self.refresh_model(report);
        let report = &*report;
        let live = self.panel.measures(&report.topology);
        // Its own id: every tab and every report keeps its own scroll offset (another report
        // opens at its top, not where the last one was scrolled to).
        egui::ScrollArea::both()
            .id_salt(("scaling-view", report.name()))
            .auto_shrink([false; 2])
            .show(ui, |ui| {
                self.controls(ui, &report.topology, live);
                if let Some(e) = self.panel.error() {
                    ui.colored_label(palette::P2P_REFUSED, e);
                }
                let section = report.scaling.as_ref();
                if let Some(m) = section.and_then(|s| s.run.machine.as_ref()) {
                    ui.label(RichText::new(machine_line(m)).weak());
                }
                if let Some(note) = report.older_method() {
                    ui.colored_label(palette::UNKNOWN, format!("Older method: {note}."));
                }
                let none = ScalingRun::default();
                let run = section.map_or(&none, |s| &s.run);
                let chosen = self.chosen();
                if chosen.is_empty() {
                    ui.label(RichText::new("Pick one or more workloads above.").weak());
                }
                let max_gpus = self.shown_max(&report.topology);
                for w in &chosen {
                    self.calibration_field(ui, w);
                    workload_plots(ui, w, run, self.y_axis, max_gpus);
                }
                crate::ui::layout::within_view(ui, |ui| {
                    for n in self.notes(section) {
                        ui.colored_label(palette::P2P_NS, n);
                    }
                });
                ui.separator();
                self.form_ui(ui);
            });
    }

    fn controls(&mut self, ui: &mut Ui, topology: &Topology, live: bool) {
        crate::ui::layout::run_settings(ui, |ui| {
            ui.horizontal_wrapped(|ui| {
                ui.label(RichText::new("Workloads").strong());
                for w in &self.workloads {
                    let mut on = self.selected.contains(&w.name);
                    if ui
                        .checkbox(&mut on, &w.name)
                        .on_hover_text(format!("{} — {}", w.title, w.pattern.describe()))
                        .changed()
                    {
                        if on {
                            self.selected.insert(w.name.clone());
                        } else {
                            self.selected.remove(&w.name);
                        }
                    }
                }
            });
            ui.horizontal_wrapped(|ui| {
                let label = live.then(|| self.panel.run_label(true, "Measure"));
                let ok = !self.selected.is_empty();
                let run = self
                    .panel
                    .controls(ui, label.as_deref(), ok, Progress::Spinner);
                let hover = "cuBLAS GEMM rate, NCCL all-reduce sweep, the real PyTorch training \
                             step on 1, 2, 4 … N GPUs (synthetic proxies without PyTorch)";
                if run.is_some_and(|r| r.on_hover_text(hover).clicked()) {
                    self.start(ui.ctx(), topology);
                }
                modeled_line(
                    ui,
                    if live {
                        "the model updates as you pick workloads; Measure runs them on the GPUs"
                    } else {
                        "the model updates as you pick workloads (measuring needs this machine's GPUs)"
                    },
                );
            });
        });
        ui.add_space(4.0);
        crate::ui::layout::show_group(ui, |ui| {
            ui.label("plot");
            ui.selectable_value(&mut self.y_axis, YAxis::Speedup, "speedup (log)");
            ui.selectable_value(&mut self.y_axis, YAxis::Efficiency, "efficiency %");
            ui.separator();
            let shown = self.shown_max(topology);
            let machine = topology.gpus.len();
            let label = ui.label("model up to");
            egui::ComboBox::from_id_salt("scaling-max-gpus")
                .selected_text(format!("{shown} GPUs"))
                .show_ui(ui, |ui| {
                    // The machine's own count is offered; fewer are not (it is modeled whole).
                    let mut counts = vec![8, 16, 64, 256, 1024, machine];
                    counts.sort_unstable();
                    counts.dedup();
                    for n in counts {
                        let text = if n == machine {
                            format!("{n} GPUs (this machine)")
                        } else {
                            format!("{n} GPUs")
                        };
                        ui.add_enabled_ui(n >= machine, |ui| {
                            if ui.selectable_label(shown == n, text).clicked() {
                                self.max_gpus = n;
                            }
                        })
                        .response
                        .on_disabled_hover_text(format!(
                            "this machine has {machine} GPUs: it is always modeled whole"
                        ));
                    }
                })
                .response
                .labelled_by(label.id);
        });
    }

    fn start(&mut self, ctx: &egui::Context, topology: &Topology) {
        let job = crate::job::Job::Scaling {
            target: self.panel.target(topology, true),
            gpus: Default::default(),
            workloads: self.chosen(),
            modes: Mode::ALL.to_vec(),
            max_gpus: self.shown_max(topology),
            measure: Some(MeasureOptions::default()),
            pricing: None,
        };
        self.panel.start(ctx, "scalescope-scaling", job, None);
    }

    /// "your 1-GPU step" for one workload: a figure typed here calibrates its compute term (the
    /// model then starts from it); empty uses what was measured or the catalog.
    fn calibration_field(&mut self, ui: &mut Ui, w: &Workload) {
        if self.fixed || !w.pattern.is_training() {
            return;
        }
        ui.add_space(6.0);
        let text = self
            .calibration_text
            .entry(w.name.clone())
            .or_insert_with(|| w.step_ms_1gpu.map(|v| format!("{v}")).unwrap_or_default());
        let mut changed = false;
        let mut bad = None;
        ui.horizontal(|ui| {
            let l = ui.label(format!(
                "{}: your 1-GPU step at {} (ms, optional)",
                w.name,
                crate::model::quantities::samples(w.per_gpu_batch)
            ));
            changed = ui
                .add(egui::TextEdit::singleline(text).desired_width(80.0))
                .labelled_by(l.id)
                .changed();
            let t = text.trim();
            match t.parse::<f64>() {
                _ if t.is_empty() => {}
                Ok(v) if v.is_finite() && v > 0.0 => {
                    bad = crate::scaling::rates::possible_step(w, v).err()
                }
                _ => bad = Some(format!("{t:?} is not a positive number of ms")),
            }
        });
        if let Some(b) = &bad {
            ui.colored_label(palette::P2P_REFUSED, b);
        }
        if changed && bad.is_none() {
            let value = text.trim().parse::<f64>().ok();
            if let Some(x) = self.workloads.iter_mut().find(|x| x.name == w.name) {
                x.step_ms_1gpu = value;
            }
            self.modeled_key.clear();
        }
    }

    fn form_ui(&mut self, ui: &mut Ui) {
        egui::CollapsingHeader::new("Add a custom workload")
            .default_open(false)
            .show(ui, |ui| {
                let f = &mut self.form;
                egui::Grid::new("scaling-form")
                    .num_columns(2)
                    .show(ui, |ui| {
                        let field = |ui: &mut Ui, label: &str, value: &mut String| {
                            let l = ui.label(label);
                            ui.add(egui::TextEdit::singleline(value).desired_width(140.0))
                                .labelled_by(l.id);
                            ui.end_row();
                        };
                        field(ui, "name", &mut f.name);
                        ui.label("");
                        egui::ComboBox::new("scaling-form-pattern", "pattern")
                            .selected_text(f.pattern.id())
                            .show_ui(ui, |ui| {
                                for p in Pattern::ALL {
                                    ui.selectable_value(&mut f.pattern, p, p.id());
                                }
                            });
                        ui.end_row();
                        field(ui, "params", &mut f.params);
                        field(ui, "FLOPs per sample", &mut f.flops_per_sample);
                        field(ui, "per-GPU batch", &mut f.per_gpu_batch);
                        field(ui, "strong global batch", &mut f.strong_global_batch);
                        field(ui, "bucket MB", &mut f.bucket_mb);
                        field(ui, "utilization", &mut f.utilization);
                        field(ui, "overlap", &mut f.overlap);
                        field(ui, "input bytes/sample", &mut f.input_bytes);
                        field(ui, "output bytes/sample", &mut f.output_bytes);
                        field(ui, "link GB/s", &mut f.link_gbps);
                        field(ui, "your 1-GPU step ms", &mut f.step_ms_1gpu);
                    });
                if let Some(e) = &f.error {
                    ui.colored_label(palette::P2P_REFUSED, e);
                }
                if ui.button("Add workload").clicked() {
                    self.add_from_form();
                }
            });
    }
}

/// Keeps only the measured rows (the view models itself; measured rows carry model_error).
fn measured_only(run: &ScalingRun) -> ScalingRun {
    ScalingRun {
        rows: measured_rows(run),
        ..run.clone()
    }
}

fn machine_line(m: &crate::scaling::Machine) -> String {
    let rate = |r: &Option<crate::scaling::GemmRate>| {
        r.as_ref().map_or("—".to_string(), |r| {
            format!("{:.0} TFLOP/s {}", r.tflops, r.source)
        })
    };
    // With GPUs measured running at once, the slowest of them (what a step over all of them
    // is modeled at) beside the one-GPU rate.
    let together = |dtype: crate::scaling::workload::ComputeDtype| {
        crate::scaling::rates::slowest(&m.concurrent, dtype).map_or(String::new(), |(gpu, r)| {
            format!(
                " (all {} at once: {:.0}, slowest GPU {gpu})",
                m.concurrent.len(),
                r.tflops
            )
        })
    };
    format!(
        "{} · {} GPUs per node · bf16 {}{} · fp32 {}{} · all-reduce curve {} · beyond the box: {:.0} GB/s per GPU ({})",
        m.label,
        m.gpus_per_node,
        rate(&m.rates.bf16),
        together(crate::scaling::workload::ComputeDtype::Bf16),
        rate(&m.rates.fp32),
        together(crate::scaling::workload::ComputeDtype::Fp32),
        m.comm
            .as_ref()
            .map_or("—".to_string(), |c| c.source.to_string()),
        m.nic_per_gpu.gbps,
        m.nic_per_gpu.source
    )
}

fn log2_tick(mark: GridMark, _range: &std::ops::RangeInclusive<f64>) -> String {
    let n = 2f64.powf(mark.value);
    if (mark.value - mark.value.round()).abs() < 1e-6 {
        format!("{}", n.round())
    } else {
        String::new()
    }
}

fn percent_tick(mark: GridMark, _range: &std::ops::RangeInclusive<f64>) -> String {
    format!("{:.0}%", mark.value)
}

// Okabe & Ito's colour-blind-safe palette (Color Universal Design, 2008).
const MODEL: Color32 = Color32::from_rgb(0x00, 0x72, 0xb2);
const FRAMEWORK: Color32 = Color32::from_rgb(0xd5, 0x5e, 0x00);
const PROXY: Color32 = Color32::from_rgb(0xcc, 0x79, 0xa7);
const IDEAL: Color32 = Color32::from_rgb(0x99, 0x99, 0x99);
const COMPUTE: Color32 = Color32::from_rgb(0x56, 0xb4, 0xe9);
const COMM: Color32 = Color32::from_rgb(0xe6, 0x9f, 0x00);
const OTHER: Color32 = Color32::from_rgb(0x00, 0x9e, 0x73);

/// Plots and the table of one workload, weak and strong side by side.
pub fn workload_plots(ui: &mut Ui, w: &Workload, run: &ScalingRun, y_axis: YAxis, max_gpus: usize) {
    let rows = &run.rows[..];
    ui.add_space(6.0);
    ui.label(RichText::new(format!("{} — {}", w.title, w.pattern.describe())).strong());
    if let Some(cal) = rows
        .iter()
        .find(|r| r.workload == w.name && r.source == RowSource::Modeled && r.n_gpus == 1)
        .and_then(|r| r.calibration)
    {
        ui.label(RichText::new(format!("model calibrated by: {}", cal.id())).weak());
    }
    ui.columns(2, |cols| {
        for (col, mode) in cols.iter_mut().zip(Mode::ALL) {
            let mine: Vec<&ScalingPoint> = rows
                .iter()
                .filter(|r| r.workload == w.name && r.mode == mode && r.n_gpus <= max_gpus.max(1))
                .collect();
            col.label(RichText::new(format!("{mode} scaling")).italics());
            mode_plots(col, &w.name, mode, &mine, y_axis, max_gpus);
        }
    });
    legend_row(ui);
    table(ui, w, run, max_gpus);
    // An efficiency above 1.00 (plotted above 100 %) is never shown without its cause.
    for line in crate::report::superlinear::notes(rows, Some(&w.name), None) {
        ui.label(RichText::new(line).small().color(palette::UNKNOWN));
    }
}

/// The legend, under the plots (never over the data).
fn legend_row(ui: &mut Ui) {
    ui.horizontal_wrapped(|ui| {
        let item = |ui: &mut Ui, color: Color32, text: &str| {
            ui.label(RichText::new("■").color(color));
            ui.label(RichText::new(text).small());
        };
        item(ui, MODEL, "model (dashed), projected over nodes (dotted)");
        item(ui, FRAMEWORK, "● measured: real framework run");
        item(ui, PROXY, "□ measured: synthetic proxy");
        item(ui, IDEAL, "ideal");
        ui.separator();
        item(ui, COMPUTE, "compute");
        item(ui, COMM, "exposed communication");
        item(ui, OTHER, "other (host, sync, queue)");
    });
}

fn series(rows: &[&ScalingPoint], f: impl Fn(&ScalingPoint) -> Option<f64>) -> Vec<[f64; 2]> {
    rows.iter()
        .filter_map(|r| Some([(r.n_gpus as f64).log2(), f(r)?]))
        .collect()
}

fn mode_plots(
    ui: &mut Ui,
    name: &str,
    mode: Mode,
    rows: &[&ScalingPoint],
    y_axis: YAxis,
    max_gpus: usize,
) {
    let series = ModeSeries::of(rows);
    let x_max = (max_gpus.max(2) as f64).log2();
    let id = format!("{name}-{mode}");
    series.main_plot(ui, &id, y_axis, x_max);
    series.breakdown_plot(ui, &id, x_max);
}

/// One mode's rows split as its plots draw them.
struct ModeSeries<'a> {
    /// The model's rows, in the box and projected past it.
    modeled: Vec<&'a ScalingPoint>,
    /// The model's rows inside the box.
    in_box: Vec<&'a ScalingPoint>,
    /// The projected rows, from the box's last point so that the line is continuous.
    projected: Vec<&'a ScalingPoint>,
    /// Rows measured in a framework run.
    framework: Vec<&'a ScalingPoint>,
    /// Rows measured by the proxy.
    proxy: Vec<&'a ScalingPoint>,
}

impl<'a> ModeSeries<'a> {
    fn of(rows: &[&'a ScalingPoint]) -> Self {
        let pick = |src: RowSource| -> Vec<&'a ScalingPoint> {
            rows.iter().copied().filter(|r| r.source == src).collect()
        };
        let modeled = pick(RowSource::Modeled);
        let in_box: Vec<&ScalingPoint> = modeled.iter().copied().filter(|r| !r.projected).collect();
        let proj = modeled.iter().copied().filter(|r| r.projected);
        let projected = in_box.last().copied().into_iter().chain(proj).collect();
        Self {
            framework: pick(RowSource::Framework),
            proxy: pick(RowSource::Proxy),
            modeled,
            in_box,
            projected,
        }
    }

    /// Speedup or efficiency against the GPU count: ideal, model, projection, measurements.
    fn main_plot(&self, ui: &mut Ui, id: &str, y_axis: YAxis, x_max: f64) {
        let what = match y_axis {
            YAxis::Speedup => "speedup (log₂)",
            YAxis::Efficiency => "efficiency",
        };
        let f = |r: &ScalingPoint| match y_axis {
            YAxis::Speedup => r.speedup.filter(|s| *s > 0.0).map(f64::log2),
            YAxis::Efficiency => r.efficiency.map(|e| e * 100.0),
        };
        let mut plot = Plot::new(format!("scaling-main-{id}"))
            .height(190.0)
            .x_axis_label("GPUs (log₂)")
            .x_grid_spacer(crate::ui::plots::log2_grid)
            .y_axis_label(what)
            .x_axis_formatter(log2_tick)
            .include_x(0.0)
            .include_x(x_max)
            .allow_scroll(false)
            .allow_drag(false)
            .allow_zoom(false);
        plot = match y_axis {
            YAxis::Speedup => plot
                .y_axis_formatter(log2_tick)
                .y_grid_spacer(crate::ui::plots::log2_grid)
                .include_y(0.0)
                .include_y(x_max),
            YAxis::Efficiency => plot
                .y_axis_formatter(percent_tick)
                .include_y(0.0)
                .include_y(105.0),
        };
        plot.show(ui, |p| {
            let ideal: Vec<[f64; 2]> = (0..=x_max.ceil() as u32)
                .map(|e| {
                    let x = e as f64;
                    [x, if y_axis == YAxis::Speedup { x } else { 100.0 }]
                })
                .collect();
            p.line(
                Line::new("ideal", PlotPoints::from(ideal))
                    .color(IDEAL)
                    .style(LineStyle::dashed_dense()),
            );
            self.model_lines(p, f);
            self.measured_points(p, f);
        });
    }

    /// The model's line in the box, and its projection past it (dotted).
    fn model_lines(&self, p: &mut egui_plot::PlotUi<'_>, f: impl Fn(&ScalingPoint) -> Option<f64>) {
        p.line(
            Line::new(
                "model (modeled)",
                PlotPoints::from(series(&self.in_box, &f)),
            )
            .color(MODEL)
            .width(2.0)
            .style(LineStyle::dashed_loose()),
        );
        if self.projected.len() > 1 {
            p.line(
                Line::new(
                    "projected (modeled)",
                    PlotPoints::from(series(&self.projected, &f)),
                )
                .color(MODEL)
                .width(2.0)
                .style(LineStyle::dotted_loose()),
            );
        }
    }

    /// The measured rows as points: a framework's filled circles, the proxy's open squares.
    fn measured_points(
        &self,
        p: &mut egui_plot::PlotUi<'_>,
        f: impl Fn(&ScalingPoint) -> Option<f64>,
    ) {
        let m = series(&self.framework, &f);
        if !m.is_empty() {
            p.points(
                Points::new("measured: framework", PlotPoints::from(m))
                    .radius(5.0)
                    .shape(MarkerShape::Circle)
                    .filled(true)
                    .color(FRAMEWORK),
            );
        }
        let m = series(&self.proxy, &f);
        if !m.is_empty() {
            p.points(
                Points::new("measured: proxy", PlotPoints::from(m))
                    .radius(5.0)
                    .shape(MarkerShape::Square)
                    .filled(false)
                    .color(PROXY),
            );
        }
    }

    /// The model's step time per GPU count, stacked: compute, exposed communication, other.
    fn breakdown_plot(&self, ui: &mut Ui, id: &str, x_max: f64) {
        let bars = |f: &dyn Fn(&ScalingPoint) -> Option<f64>| -> Vec<Bar> {
            self.modeled
                .iter()
                .filter_map(|r| {
                    Some(
                        Bar::new((r.n_gpus as f64).log2(), f(r)?)
                            .width(0.15)
                            .name(format!(
                                "{} GPUs{}",
                                r.n_gpus,
                                if r.projected { " (projected)" } else { "" }
                            )),
                    )
                })
                .collect()
        };
        // A row the host sets keeps the host's time as its compute (the step's critical path):
        // drawn here as the GPU's own work, with the host's wait beyond it in "other", so that a
        // 28 ms step of 2 ms of kernels is not a 28 ms bar of compute.
        let compute = BarChart::new(
            "compute (modeled)",
            bars(&|r| r.gpu_work_ms.or(r.compute_ms)),
        )
        .color(COMPUTE);
        let comm = BarChart::new("exposed communication", bars(&|r| r.comm_exposed_ms))
            .color(COMM)
            .stack_on(&[&compute]);
        let other = BarChart::new("other (host, sync, queue)", bars(&host_and_other_ms))
            .color(OTHER)
            .stack_on(&[&compute, &comm]);
        Plot::new(format!("scaling-breakdown-{id}"))
            .height(150.0)
            .x_axis_label("GPUs (log₂)")
            .x_grid_spacer(crate::ui::plots::log2_grid)
            .y_axis_label("step ms (model)")
            .x_axis_formatter(log2_tick)
            .include_x(-0.3)
            .include_x(x_max + 0.3)
            .include_y(0.0)
            .allow_scroll(false)
            .allow_drag(false)
            .allow_zoom(false)
            .show(ui, |p| {
                p.bar_chart(compute);
                p.bar_chart(comm);
                p.bar_chart(other);
            });
    }
}

/// What the breakdown draws as "other": the row's other time, plus, where the host sets the
/// step, the host's time beyond the GPU's own work.
fn host_and_other_ms(r: &ScalingPoint) -> Option<f64> {
    let host_wait = match (r.gpu_work_ms, r.compute_ms) {
        (Some(gpu), Some(step)) => (step - gpu).max(0.0),
        _ => 0.0,
    };
    match r.other_ms {
        Some(o) => Some(o + host_wait),
        None => (host_wait > 0.0).then_some(host_wait),
    }
}

fn cell(v: Option<f64>, d: usize) -> String {
    v.map_or("—".to_string(), |v| format!("{v:.d$}"))
}

/// The GPU counts the table shows: every measured count, the box's, and the largest modeled
/// count up to `max_gpus` (the chosen n).
pub fn table_counts(rows: &[&ScalingPoint], max_gpus: usize) -> Vec<usize> {
    let mut v: Vec<usize> = rows
        .iter()
        .filter(|r| r.source.is_measured())
        .map(|r| r.n_gpus)
        .collect();
    if let Some(n) = rows
        .iter()
        .filter(|r| r.source == RowSource::Modeled && !r.projected)
        .map(|r| r.n_gpus)
        .max()
    {
        v.push(n);
    }
    if let Some(n) = rows
        .iter()
        .filter(|r| r.source == RowSource::Modeled && r.n_gpus <= max_gpus)
        .map(|r| r.n_gpus)
        .max()
    {
        v.push(n);
    }
    v.sort_unstable();
    v.dedup();
    v
}

/// The per-GPU batch of a measured and a modeled row at one count: one cell where they agree
/// (`8 = 4 × 2`; a row that does not say its micro-batches agrees with one that does at the same
/// batch), `measured / modeled` where they differ, `—` where neither exists.
pub fn per_gpu_cell(meas: Option<&ScalingPoint>, model: Option<&ScalingPoint>) -> String {
    match (meas, model) {
        (Some(a), Some(b)) => {
            let said = |r: &ScalingPoint| r.micro_batch.is_some() && r.accumulate.is_some();
            let agree = a.per_gpu_batch == b.per_gpu_batch
                && a.splits_unevenly() == b.splits_unevenly()
                && (!said(a) || !said(b) || a.per_gpu_cell() == b.per_gpu_cell());
            match (agree, said(a)) {
                (true, true) => a.per_gpu_cell(),
                (true, false) => b.per_gpu_cell(),
                (false, _) => format!("{} / {}", a.per_gpu_cell(), b.per_gpu_cell()),
            }
        }
        (Some(r), None) | (None, Some(r)) => r.per_gpu_cell(),
        (None, None) => "—".to_string(),
    }
}

/// The "1 GPU under DDP" row of `plain`'s step: its step and samples/s (measured), nothing of
/// its own in the model, speedup and efficiency columns, its words on hover.
fn under_ddp_row(
    ui: &mut Ui,
    mode: Mode,
    plain: &ScalingPoint,
    (step, u): (&MeasuredStep, &UnderDdp),
) {
    ui.label(mode.id());
    // The plain step it is set against was timed beside it, not the window's above.
    // Short, for the table's GPUs column; the hover has the rest (where the plain step beside
    // it ran at another speed than its own row, that too).
    ui.label(format!(
        "1 under DDP: {:+.1} % vs the plain {:.1} ms beside it",
        u.cost_share() * 100.0,
        u.plain_ms
    ))
    .on_hover_text(u.describe(step));
    ui.label(per_gpu_cell(Some(plain), None));
    ui.label(cell(Some(u.wrapped_ms), 1));
    ui.label("—");
    ui.label("—");
    ui.label(cell(Some(u.samples_per_s(plain.per_gpu_batch)), 0));
    for _ in 0..6 {
        ui.label("—");
    }
    ui.end_row();
}

/// Measured and modeled side by side at the counts of [`table_counts`], with the error.
fn table(ui: &mut Ui, w: &Workload, run: &ScalingRun, max_gpus: usize) {
    let mine: Vec<&ScalingPoint> = run.rows.iter().filter(|r| r.workload == w.name).collect();
    egui::Grid::new(format!("scaling-table-{}", w.name))
        .striped(true)
        .num_columns(13)
        .show(ui, |ui| {
            for h in [
                "mode",
                "GPUs",
                "per GPU",
                "step ms meas.",
                "step ms model",
                "error",
                "samples/s meas.",
                "samples/s model",
                "speedup meas.",
                "speedup model",
                "eff. meas.",
                "eff. model",
                "memory GiB/GPU, one micro-batch",
            ] {
                ui.label(RichText::new(h).strong().small());
            }
            ui.end_row();
            for mode in Mode::ALL {
                let of_mode: Vec<&ScalingPoint> =
                    mine.iter().copied().filter(|r| r.mode == mode).collect();
                for n in table_counts(&of_mode, max_gpus) {
                    let at = |pred: &dyn Fn(&ScalingPoint) -> bool| {
                        of_mode.iter().copied().find(|r| r.n_gpus == n && pred(r))
                    };
                    let meas = at(&|r| r.source.is_measured());
                    let model = at(&|r| r.source == RowSource::Modeled);
                    ui.label(mode.id());
                    let proj = model.is_some_and(|m| m.projected);
                    ui.label(format!("{n}{}", if proj { " (projected)" } else { "" }));
                    ui.label(per_gpu_cell(meas, model));
                    // A synthetic proxy's step is measured, but not the workload's: said in
                    // its cells, not only by the plot's markers.
                    let proxy = |text: String| match meas {
                        Some(r) if r.source == RowSource::Proxy && text != "—" => {
                            format!("{text} proxy")
                        }
                        _ => text,
                    };
                    ui.label(proxy(cell(meas.and_then(|r| r.step_time_ms), 1)));
                    // The host's floor sets the step: said in the cell, as the CLI's `bound`.
                    let host_set = model.is_some_and(|r| r.bound == Some(Bound::Host));
                    let step = cell(model.and_then(|r| r.step_time_ms), 1);
                    ui.label(if host_set {
                        format!("{step} host")
                    } else {
                        step
                    });
                    let error = ui.label(meas.map_or("—".to_string(), |r| r.error_cell()));
                    if meas.is_some_and(|r| r.calibration_point) {
                        error.on_hover_text(crate::scaling::CALIBRATION_POINT);
                    }
                    ui.label(proxy(cell(meas.and_then(|r| r.throughput), 0)));
                    ui.label(cell(model.and_then(|r| r.throughput), 0));
                    let speedup = |r: Option<&ScalingPoint>| {
                        r.map_or("—".to_string(), |r| r.speedup_cell())
                    };
                    ui.label(speedup(meas));
                    ui.label(speedup(model));
                    crate::ui::views::compare::eff_label(ui, meas, &run.rows);
                    crate::ui::views::compare::eff_label(ui, model, &run.rows);
                    let mem =
                        |r: Option<&ScalingPoint>| cell(r.and_then(|r| r.memory_gib_per_gpu), 1);
                    let fits = model.and_then(|r| r.fits);
                    let text = format!(
                        "{} / {}{}",
                        mem(meas),
                        mem(model),
                        if fits == Some(false) {
                            " — does not fit"
                        } else {
                            ""
                        }
                    );
                    let label = ui.label(if fits == Some(false) {
                        RichText::new(text).color(palette::P2P_REFUSED)
                    } else {
                        RichText::new(text)
                    });
                    if let Some(m) = model.filter(|m| m.fits == Some(false)) {
                        label.on_hover_text(&m.basis);
                    }
                    ui.end_row();
                    // Below the plain 1-GPU step: the same step under DDP, where timed.
                    if let Some((plain, under)) =
                        meas.and_then(|r| Some((r, run.under_ddp_below(r)?)))
                    {
                        under_ddp_row(ui, mode, plain, under);
                    }
                }
            }
        });
    crate::ui::layout::within_view(ui, table_legend);
}

/// The words under the table: what its columns and marks mean.
fn table_legend(ui: &mut Ui) {
    ui.label(
        RichText::new(
            "meas.: measured here (a real framework run; \"proxy\": a synthetic proxy step — GEMMs and NCCL, the older method — not the workload's) · model: modeled · per GPU: samples per GPU per step, 8 = 2 × 4: 4 micro-batches of 2, gradients accumulated (measured / modeled where they differ); ≤: the global batch does not split evenly, the GPUs with the most set the step · host: the CPU issuing the step sets it (eager PyTorch's host floor), not the GPU · error: (model − measured) ÷ measured (cal.: the step the model is calibrated from) · memory: measured peak / modeled, one micro-batch · 1 under DDP: the 1-GPU step wrapped in DistributedDataParallel, timed beside the plain one (what the wrapper costs; speedups are against the plain step)",
        )
        .weak()
        .small(),
    );
}
