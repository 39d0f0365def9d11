//! The embedded PTX module and the table of its kernels, resolved once when a GPU opens.
//!
//! `ptx/cuimg_kernels.ptx` is built from `kernels-gpu/` by `cargo xtask ptx` and committed, so
//! users need neither the nightly toolchain nor the CUDA toolkit; `cargo xtask verify` fails
//! when it is stale. Which kernels exist, and what each takes, is `cuimg_abi::KERNELS`: the
//! table loads exactly those, and the test below checks the PTX declares each as the ABI says.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};

use cudarc::driver::{CudaFunction, CudaModule, DriverError};
use cuimg_abi::Kernel;

/// The kernels, as PTX text.
pub(crate) const PTX: &str = include_str!("ptx/cuimg_kernels.ptx");

mod cubins {
    include!("ptx/cubins.rs");
}
pub(crate) use cubins::CUBINS;

/// One kernel, with its occupancy per shared-memory size (asked of the driver once each).
pub(crate) struct Loaded {
    pub func: CudaFunction,
    occupancy: Mutex<Vec<(u32, u32)>>,
}

impl Loaded {
    /// Blocks of `block` threads and `smem` shared bytes that fit on one multiprocessor.
    pub fn blocks_per_sm(&self, block: u32, smem: u32) -> Result<u32, DriverError> {
        let mut cache = self.occupancy.lock().unwrap_or_else(|e| e.into_inner());
        // Every kernel launches with one block size (`cuimg_abi::BLOCK`), so shared memory
        // is the only key.
        if let Some(&(_, n)) = cache.iter().find(|(s, _)| *s == smem) {
            return Ok(n);
        }
        let n = self.func.occupancy_max_active_blocks_per_multiprocessor(block, smem as usize, None)?.max(1);
        cache.push((smem, n));
        Ok(n)
    }
}

/// Every kernel of the module, by name.
pub(crate) struct Kernels(HashMap<&'static str, Loaded>);

impl Kernels {
    pub fn load(module: &Arc<CudaModule>) -> Result<Kernels, DriverError> {
        let mut table = HashMap::new();
        for sig in cuimg_abi::KERNELS.iter().flat_map(|op| op.iter()) {
            let loaded = Loaded { func: module.load_function(sig.name)?, occupancy: Mutex::new(Vec::new()) };
            table.insert(sig.name, loaded);
        }
        Ok(Kernels(table))
    }

    /// The kernel of marker `K`.
    pub fn get<K: Kernel>(&self) -> &Loaded {
        // `load` resolved every kernel of `cuimg_abi::KERNELS`, and every marker is listed
        // there (the `kernels!` macro declares both), or the GPU would not have opened.
        self.0.get(K::NAME).expect("every ABI kernel is loaded when the GPU opens")
    }
}

#[cfg(test)]
mod tests {
    //! The host-kernel contract, checked against the committed PTX without a GPU.

    use cuimg_abi::Signature;

    /// `(name, [(align, size)])` of every `.entry` in the PTX text.
    fn entries(ptx: &str) -> Vec<(String, Vec<(usize, usize)>)> {
        let mut out = Vec::new();
        let mut lines = ptx.lines();
        while let Some(line) = lines.next() {
            let Some(name) = line.strip_prefix(".visible .entry ") else { continue };
            let name = name.trim_end_matches('(').to_string();
            let mut params = Vec::new();
            for p in lines.by_ref() {
                let p = p.trim();
                if p.starts_with(')') {
                    break;
                }
                params.push(param(p).unwrap_or_else(|| panic!("{name}: unreadable parameter `{p}`")));
            }
            out.push((name, params));
        }
        out
    }

    /// `.param .align A .b8 NAME[N]` as `(A, N)`; a scalar `.param .bW NAME` (or `.uW`,
    /// `.sW`, `.fW`) as `(W / 8, W / 8)`.
    fn param(p: &str) -> Option<(usize, usize)> {
        let p = p.trim_end_matches(',');
        let words: Vec<&str> = p.split_whitespace().collect();
        match words.as_slice() {
            [".param", ".align", a, ".b8", name] => {
                let n = name.split('[').nth(1)?.trim_end_matches(']');
                Some((a.parse().ok()?, n.parse().ok()?))
            }
            [".param", ty, _] => {
                let bits: usize = ty.get(2..)?.parse().ok()?;
                Some((bits / 8, bits / 8))
            }
            _ => None,
        }
    }

    /// What `entries` finds for one ABI signature, or why it does not match.
    fn check(sig: &Signature, found: &[(String, Vec<(usize, usize)>)]) -> Result<(), String> {
        let Some((_, params)) = found.iter().find(|(n, _)| n == sig.name) else {
            return Err(format!("kernel `{}` is bound by the host but not in the PTX", sig.name));
        };
        let want = vec![(sig.align, sig.size)];
        if *params != want {
            return Err(format!(
                "kernel `{}`: the PTX declares parameters (align, bytes) {params:?}, the host passes {want:?}",
                sig.name
            ));
        }
        Ok(())
    }

    #[test]
    fn every_bound_kernel_matches_the_committed_ptx() {
        let found = entries(super::PTX);
        assert!(!found.is_empty(), "no .entry in the PTX");
        let errors: Vec<String> =
            cuimg_abi::KERNELS.iter().flat_map(|op| op.iter()).filter_map(|sig| check(sig, &found).err()).collect();
        assert!(errors.is_empty(), "the PTX and the host's ABI disagree:\n{}", errors.join("\n"));
        // And nothing in the PTX is left unbound (a kernel the host can no longer launch).
        for (name, _) in &found {
            assert!(
                cuimg_abi::KERNELS.iter().flat_map(|op| op.iter()).any(|s| s.name == name),
                "PTX kernel `{name}` has no ABI marker"
            );
        }
    }

    #[test]
    fn the_check_catches_a_mismatch() {
        let ptx = ".visible .entry k(\n\t.param .u64 k_param_0,\n\t.param .u32 k_param_1\n)\n\
                   .visible .entry s(\n\t.param .align 8 .b8 s_param_0[40]\n)\n";
        let found = entries(ptx);
        assert_eq!(found[0].1, vec![(8, 8), (4, 4)]);
        assert!(check(&Signature { name: "s", size: 40, align: 8 }, &found).is_ok());
        assert!(check(&Signature { name: "s", size: 32, align: 8 }, &found).is_err());
        assert!(check(&Signature { name: "k", size: 12, align: 8 }, &found).is_err());
        assert!(check(&Signature { name: "missing", size: 8, align: 8 }, &found).is_err());
    }
}
