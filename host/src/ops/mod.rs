//! The operations' parameter and result types, shared by the GPU API and the CPU reference.

pub mod equalize;
pub mod histogram;
pub mod lut;
pub mod weights;
