//! Tensors as NumPy's `.npy` files (format 1.0), which every framework reads
//! (`numpy.load`, then `torch.from_numpy`; candle's `Tensor::read_npy`), and batches split
//! into their images.

use super::{DType, Tensor, TensorShape};

impl Tensor {
    /// The tensor as a `.npy` file: the magic string, version 1.0, a header naming the
    /// element type, C order and the shape in memory order ([`TensorShape::dims`]), padded
    /// so that the elements start at a multiple of 64 bytes, then the elements
    /// little-endian. NumPy has no bfloat16: bf16 tensors are written as their bits
    /// (`'<u2'`); `torch.from_numpy(a).view(torch.bfloat16)` reads them.
    ///
    /// ```
    /// use cuimg::{cpu, DType, Image, Rgb8, TensorSpec};
    /// let t = cpu::to_tensor(&Image::<Rgb8>::filled(4, 2, 255).view(), &TensorSpec::new(DType::F16))?;
    /// let npy = t.to_npy();
    /// assert!(npy.starts_with(b"\x93NUMPY\x01\x00"));
    /// let len = u16::from_le_bytes([npy[8], npy[9]]) as usize;
    /// let header = std::str::from_utf8(&npy[10..10 + len]).unwrap();
    /// assert!(header.starts_with("{'descr': '<f2', 'fortran_order': False, 'shape': (1, 3, 2, 4), }"));
    /// assert_eq!((10 + len) % 64, 0);
    /// assert_eq!(&npy[10 + len..], t.as_bytes());
    /// # Ok::<(), cuimg::Error>(())
    /// ```
    pub fn to_npy(&self) -> Vec<u8> {
        let descr = match self.shape.dtype {
            DType::F32 => "<f4",
            DType::F16 => "<f2",
            DType::Bf16 => "<u2",
        };
        let dims = self.shape.dims().map(|d| d.to_string()).join(", ");
        let mut header = format!("{{'descr': '{descr}', 'fortran_order': False, 'shape': ({dims}), }}");
        // Magic (6), version (2), header length (2), the header and its newline: a multiple
        // of 64, as NumPy writes it (so that the elements are aligned when mapped).
        let pad = (64 - (10 + header.len() + 1) % 64) % 64;
        header.extend(std::iter::repeat_n(' ', pad));
        header.push('\n');
        let mut out = Vec::with_capacity(10 + header.len() + self.bytes.len());
        out.extend_from_slice(b"\x93NUMPY\x01\x00");
        out.extend_from_slice(&(header.len() as u16).to_le_bytes());
        out.extend_from_slice(header.as_bytes());
        out.extend_from_slice(&self.bytes);
        out
    }

    /// Each image as a tensor of its own, in order.
    pub fn split(&self) -> Vec<Tensor> {
        let one = TensorShape { images: 1, ..self.shape };
        if one.image_bytes() == 0 {
            return vec![Tensor { bytes: Vec::new(), shape: one }; self.shape.images];
        }
        self.bytes.chunks_exact(one.image_bytes()).map(|b| Tensor { bytes: b.to_vec(), shape: one }).collect()
    }
}

#[cfg(test)]
mod tests {
    use crate::{DType, Tensor, TensorLayout, TensorShape};

    fn tensor(images: usize, dtype: DType, layout: TensorLayout) -> Tensor {
        let shape = TensorShape { images, channels: 3, height: 5, width: 7, dtype, layout };
        let n = shape.bytes().unwrap();
        Tensor::from_bytes(shape, (0..n).map(|i| i as u8).collect()).unwrap()
    }

    #[test]
    fn npy_headers_name_the_type_and_shape_and_align_the_elements() {
        for (dtype, descr) in [(DType::F32, "<f4"), (DType::F16, "<f2"), (DType::Bf16, "<u2")] {
            for (layout, shape) in [(TensorLayout::Nchw, "(2, 3, 5, 7)"), (TensorLayout::Nhwc, "(2, 5, 7, 3)")] {
                let t = tensor(2, dtype, layout);
                let npy = t.to_npy();
                let len = u16::from_le_bytes([npy[8], npy[9]]) as usize;
                assert_eq!((10 + len) % 64, 0, "{dtype:?} {layout:?}");
                let header = std::str::from_utf8(&npy[10..10 + len]).unwrap();
                let want = format!("{{'descr': '{descr}', 'fortran_order': False, 'shape': {shape}, }}");
                assert_eq!(header.trim_end(), want);
                assert!(header.ends_with('\n'));
                assert_eq!(&npy[10 + len..], t.as_bytes());
            }
        }
    }

    #[test]
    fn a_batch_splits_into_its_images_in_order() {
        let t = tensor(3, DType::F16, TensorLayout::Nchw);
        let parts = t.split();
        assert_eq!(parts.len(), 3);
        let per = t.shape().image_bytes();
        for (i, p) in parts.iter().enumerate() {
            assert_eq!(p.shape(), TensorShape { images: 1, ..t.shape() });
            assert_eq!(p.as_bytes(), &t.as_bytes()[i * per..(i + 1) * per]);
        }
    }
}
