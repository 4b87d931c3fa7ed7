//! The bytes of one remembered model examination ([`Remembered`]), written and read back
//! exactly (fractions as big integers, sums as they are kept).

use std::sync::Arc;

use mccbuild_rules::confidence::{ConfidenceTally, ToolIdx, ToolTally};
use mccbuild_rules::exact::{Exact, Sum};
use mccbuild_rules::podium::Completed;
use num_bigint::BigInt;

use super::Remembered;
use crate::db::{Agreement, DecisionNeeds, ExamTotal};

#[derive(Default)]
pub(super) struct Writer(pub(super) Vec<u8>);

impl Writer {
    fn u8(&mut self, x: u8) {
        self.0.push(x);
    }
    pub(super) fn u32(&mut self, x: u32) {
        self.0.extend_from_slice(&x.to_le_bytes());
    }
    fn u64(&mut self, x: u64) {
        self.0.extend_from_slice(&x.to_le_bytes());
    }
    fn f64(&mut self, x: f64) {
        self.u64(x.to_bits());
    }
    pub(super) fn bytes(&mut self, b: &[u8]) {
        self.0.extend_from_slice(b);
    }
    fn big(&mut self, n: &BigInt) {
        let b = n.to_signed_bytes_le();
        self.u32(b.len() as u32);
        self.bytes(&b);
    }
    fn sum(&mut self, s: &Sum) {
        match s {
            Sum::Small(n, d) => {
                self.u8(0);
                self.bytes(&n.to_le_bytes());
                self.bytes(&d.to_le_bytes());
            }
            Sum::Big(x) => {
                self.u8(1);
                self.big(x.numer());
                self.big(x.denom());
            }
        }
    }
    fn tools(&mut self, tools: &[ToolIdx]) {
        self.u32(tools.len() as u32);
        tools.iter().for_each(|t| self.u32(*t));
    }
    fn shape(&mut self, shape: &[Vec<ToolIdx>]) {
        self.u32(shape.len() as u32);
        shape.iter().for_each(|class| self.tools(class));
    }
    pub(super) fn remembered(&mut self, r: &Remembered) {
        let tally = &r.agreement.tally;
        self.u64(tally.agreed_values);
        self.u32(tally.tools.len() as u32);
        for t in &tally.tools {
            self.u64(t.selected);
            self.u64(t.correct);
        }
        self.tools(&r.agreement.needs.alone);
        self.u32(r.agreement.needs.shapes.len() as u32);
        r.agreement.needs.shapes.iter().for_each(|s| self.shape(s));
        self.u32(r.alone.len() as u32);
        r.alone.iter().for_each(|a| self.u8(*a as u8));
        self.u32(r.decided.len() as u32);
        for (shape, decision) in &r.decided {
            self.shape(shape);
            match decision {
                None => self.u8(0),
                Some(d) => {
                    self.u8(1);
                    self.u32(*d);
                }
            }
        }
        self.u32(r.totals.len() as u32);
        for t in r.totals.iter() {
            self.u32(t.tool);
            self.sum(&t.points);
            self.u32(t.completed);
            self.sum(&t.cpu_s);
            self.sum(&t.peak_memory_mb);
        }
        self.u32(r.completed.len() as u32);
        for instance in r.completed.iter() {
            self.u32(instance.len() as u32);
            for c in instance {
                self.u32(c.tool);
                self.f64(c.cpu_s);
                self.f64(c.peak_memory_mb);
            }
        }
    }
}

/// Reads what [`Writer`] wrote; None at the first byte that does not fit.
pub(super) struct Reader<'a>(pub(super) &'a [u8]);

impl<'a> Reader<'a> {
    pub(super) fn take(&mut self, n: usize) -> Option<&'a [u8]> {
        if self.0.len() < n {
            return None;
        }
        let (head, rest) = self.0.split_at(n);
        self.0 = rest;
        Some(head)
    }
    fn u8(&mut self) -> Option<u8> {
        Some(self.take(1)?[0])
    }
    pub(super) fn u32(&mut self) -> Option<u32> {
        Some(u32::from_le_bytes(self.take(4)?.try_into().ok()?))
    }
    fn u64(&mut self) -> Option<u64> {
        Some(u64::from_le_bytes(self.take(8)?.try_into().ok()?))
    }
    fn i128(&mut self) -> Option<i128> {
        Some(i128::from_le_bytes(self.take(16)?.try_into().ok()?))
    }
    fn f64(&mut self) -> Option<f64> {
        Some(f64::from_bits(self.u64()?))
    }
    /// A count of items each at least `min` bytes long: no more than the bytes left allow.
    fn count(&mut self, min: usize) -> Option<usize> {
        let n = self.u32()? as usize;
        (n.saturating_mul(min) <= self.0.len()).then_some(n)
    }
    fn big(&mut self) -> Option<BigInt> {
        let n = self.count(1)?;
        Some(BigInt::from_signed_bytes_le(self.take(n)?))
    }
    fn sum(&mut self) -> Option<Sum> {
        match self.u8()? {
            0 => {
                let (n, d) = (self.i128()?, self.i128()?);
                (d > 0).then_some(Sum::Small(n, d))
            }
            1 => {
                let (n, d) = (self.big()?, self.big()?);
                (d > BigInt::from(0)).then(|| Sum::Big(Exact::new(n, d)))
            }
            _ => None,
        }
    }
    fn tools(&mut self) -> Option<Vec<ToolIdx>> {
        let n = self.count(4)?;
        (0..n).map(|_| self.u32()).collect()
    }
    fn shape(&mut self) -> Option<Vec<Vec<ToolIdx>>> {
        let n = self.count(4)?;
        (0..n).map(|_| self.tools()).collect()
    }
    pub(super) fn remembered(&mut self) -> Option<Remembered> {
        let agreed_values = self.u64()?;
        let n = self.count(16)?;
        let tools = (0..n)
            .map(|_| {
                Some(ToolTally {
                    selected: self.u64()?,
                    correct: self.u64()?,
                })
            })
            .collect::<Option<Vec<_>>>()?;
        let alone_tools = self.tools()?;
        let n = self.count(4)?;
        let shapes = (0..n).map(|_| self.shape()).collect::<Option<Vec<_>>>()?;
        let n = self.count(1)?;
        let alone = (0..n)
            .map(|_| match self.u8()? {
                0 => Some(false),
                1 => Some(true),
                _ => None,
            })
            .collect::<Option<Vec<_>>>()?;
        let n = self.count(5)?;
        let decided = (0..n)
            .map(|_| {
                let shape = self.shape()?;
                let decision = match self.u8()? {
                    0 => None,
                    1 => Some(self.u32()?),
                    _ => return None,
                };
                Some((shape, decision))
            })
            .collect::<Option<Vec<_>>>()?;
        let n = self.count(4 + 3 * 9 + 4)?;
        let totals = (0..n)
            .map(|_| {
                Some(ExamTotal {
                    tool: self.u32()?,
                    points: self.sum()?,
                    completed: self.u32()?,
                    cpu_s: self.sum()?,
                    peak_memory_mb: self.sum()?,
                })
            })
            .collect::<Option<Arc<[_]>>>()?;
        let n = self.count(4)?;
        let completed = (0..n)
            .map(|_| {
                let k = self.count(20)?;
                (0..k)
                    .map(|_| {
                        Some(Completed {
                            tool: self.u32()?,
                            cpu_s: self.f64()?,
                            peak_memory_mb: self.f64()?,
                        })
                    })
                    .collect::<Option<Vec<_>>>()
            })
            .collect::<Option<Arc<[_]>>>()?;
        Some(Remembered {
            agreement: Agreement {
                tally: ConfidenceTally {
                    agreed_values,
                    tools,
                },
                needs: DecisionNeeds {
                    alone: alone_tools,
                    shapes,
                },
            },
            alone,
            decided,
            totals,
            completed,
        })
    }
}
