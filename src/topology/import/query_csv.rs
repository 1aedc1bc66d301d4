//! `nvidia-smi --query-gpu=… --format=csv` output: GPU names, memory and PCIe links.

use std::borrow::Cow;

use super::settle::value;
use super::{TopologyError, parse_error};

/// One row of `nvidia-smi --query-gpu=… --format=csv`.
#[derive(Default)]
pub(super) struct CsvGpu {
    pub(super) line: usize,
    pub(super) index: usize,
    pub(super) name: Option<String>,
    pub(super) uuid: Option<String>,
    pub(super) pci_bus_id: Option<String>,
    pub(super) memory_mib: Option<u64>,
    pub(super) gen_current: Option<u32>,
    pub(super) gen_max: Option<u32>,
    pub(super) width_current: Option<u32>,
    pub(super) width_max: Option<u32>,
}

/// The model fields a `--query-gpu` column fills.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum CsvField {
    Index,
    Name,
    Uuid,
    PciBusId,
    MemoryTotal,
    GenCurrent,
    GenMax,
    WidthCurrent,
    WidthMax,
    Other,
}

/// `index, name, memory.total [MiB], …` → the fields, if the line is such a header.
pub(super) fn csv_header(line: &str) -> Option<Vec<CsvField>> {
    // `--query-gpu` headers name a few dozen fields at most.
    if line.len() > 4096 || !line.contains(',') {
        return None;
    }
    let fields: Vec<CsvField> = line
        .split(',')
        .map(|f| {
            // `memory.total [MiB]` → `memory.total`.
            let name = f
                .split('[')
                .next()
                .unwrap_or("")
                .trim()
                .to_ascii_lowercase();
            match name.as_str() {
                "index" => CsvField::Index,
                "name" | "gpu_name" => CsvField::Name,
                "uuid" | "gpu_uuid" => CsvField::Uuid,
                "pci.bus_id" | "gpu_bus_id" => CsvField::PciBusId,
                "memory.total" => CsvField::MemoryTotal,
                "pcie.link.gen.current" | "pcie.link.gen.gpucurrent" => CsvField::GenCurrent,
                "pcie.link.gen.max" | "pcie.link.gen.gpumax" => CsvField::GenMax,
                "pcie.link.width.current" => CsvField::WidthCurrent,
                "pcie.link.width.max" => CsvField::WidthMax,
                _ => CsvField::Other,
            }
        })
        .collect();
    let known = fields.iter().filter(|f| **f != CsvField::Other).count();
    (fields.contains(&CsvField::Index) && known >= 2).then_some(fields)
}

/// Reads the rows under a `--query-gpu` header at `start`; returns the next line's index.
pub(super) fn parse_csv(
    lines: &[Cow<'_, str>],
    start: usize,
    fields: &[CsvField],
    origin: &str,
    out: &mut Vec<CsvGpu>,
) -> Result<usize, TopologyError> {
    let mut i = start + 1;
    while let Some(line) = lines.get(i) {
        let values: Vec<&str> = line.split(',').map(str::trim).collect();
        let index_at = fields.iter().position(|f| *f == CsvField::Index);
        let index = index_at
            .and_then(|p| values.get(p))
            .and_then(|v| v.parse::<usize>().ok());
        let Some(index) = index.filter(|_| !line.is_empty()) else {
            break;
        };
        let line_no = i + 1;
        if values.len() != fields.len() {
            return Err(parse_error(
                origin,
                line_no,
                format!(
                    "`--query-gpu` row for GPU {index} has {} fields, expected {} (one per \
                     header field on line {})",
                    values.len(),
                    fields.len(),
                    start + 1
                ),
            ));
        }
        let number = |v: &str| value(v).and_then(|v| v.split_whitespace().next()?.parse().ok());
        let mut gpu = CsvGpu {
            line: line_no,
            index,
            ..Default::default()
        };
        for (field, v) in fields.iter().zip(&values) {
            match field {
                CsvField::Name => gpu.name = value(v).map(str::to_string),
                CsvField::Uuid => gpu.uuid = value(v).map(str::to_string),
                CsvField::PciBusId => gpu.pci_bus_id = value(v).map(str::to_string),
                CsvField::MemoryTotal => gpu.memory_mib = number(v),
                CsvField::GenCurrent => gpu.gen_current = number(v).and_then(|n| n.try_into().ok()),
                CsvField::GenMax => gpu.gen_max = number(v).and_then(|n| n.try_into().ok()),
                CsvField::WidthCurrent => {
                    gpu.width_current = number(v).and_then(|n| n.try_into().ok());
                }
                CsvField::WidthMax => gpu.width_max = number(v).and_then(|n| n.try_into().ok()),
                CsvField::Index | CsvField::Other => {}
            }
        }
        out.push(gpu);
        i += 1;
    }
    Ok(i)
}
