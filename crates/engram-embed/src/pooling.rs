//! Sentence vectors from token vectors, as sentence-transformers computes them.

use candle_core::{D, DType, Result, Tensor};

use crate::spec::Pooling;

/// Pools `hidden` (batch × tokens × dim) into one vector per text (batch × dim).
///
/// `mask` (batch × tokens, any numeric dtype) is 1 for real tokens and 0 for padding.
/// Mean pooling averages only the real tokens, so a text's vector does not depend on how
/// much padding its batch needed; CLS pooling takes token 0.
pub fn pool(hidden: &Tensor, mask: &Tensor, pooling: Pooling) -> Result<Tensor> {
    match pooling {
        Pooling::Cls => hidden.narrow(1, 0, 1)?.squeeze(1),
        Pooling::Mean => {
            let mask = mask.to_dtype(hidden.dtype())?.unsqueeze(D::Minus1)?; // b × t × 1
            let summed = hidden.broadcast_mul(&mask)?.sum(1)?; // b × dim
            // A row of zeros (no tokens at all) divides by 1e-9, not 0, as in
            // sentence-transformers, and stays a zero vector.
            let counts = mask
                .sum(1)?
                .clamp(1e-9f32, f32::MAX)?
                .to_dtype(hidden.dtype())?; // b × 1
            summed.broadcast_div(&counts)
        }
    }
}

/// Scales each row of `x` (batch × dim) to unit L2 length, so that a dot product of two
/// vectors is their cosine. Norms below 1e-12 are treated as 1e-12 (torch's `normalize`),
/// so an all-zero row stays zero instead of becoming NaN.
pub fn l2_normalize(x: &Tensor) -> Result<Tensor> {
    let norms = x
        .to_dtype(DType::F32)?
        .sqr()?
        .sum_keepdim(D::Minus1)?
        .sqrt()?
        .clamp(1e-12f32, f32::MAX)?
        .to_dtype(x.dtype())?;
    x.broadcast_div(&norms)
}

#[cfg(test)]
mod tests {
    use super::*;
    use candle_core::Device;

    fn t3(v: &[f32], shape: (usize, usize, usize)) -> Tensor {
        Tensor::from_slice(v, shape, &Device::Cpu).unwrap()
    }

    #[test]
    fn mean_pooling_ignores_padding() {
        // Two texts of 3 tokens × 2 dims; the second has one padding token full of junk.
        let hidden = t3(
            &[1., 2., 3., 4., 5., 6., 10., 20., 30., 40., 999., -999.],
            (2, 3, 2),
        );
        let mask = Tensor::new(&[[1u32, 1, 1], [1, 1, 0]], &Device::Cpu).unwrap();
        let p = pool(&hidden, &mask, Pooling::Mean)
            .unwrap()
            .to_vec2::<f32>()
            .unwrap();
        assert_eq!(p, vec![vec![3., 4.], vec![20., 30.]]);
    }

    #[test]
    fn mean_pooling_of_no_tokens_is_zero_not_nan() {
        let hidden = t3(&[1., 2., 3., 4.], (1, 2, 2));
        let mask = Tensor::new(&[[0u32, 0]], &Device::Cpu).unwrap();
        let p = pool(&hidden, &mask, Pooling::Mean).unwrap();
        let n = l2_normalize(&p).unwrap().to_vec2::<f32>().unwrap();
        assert_eq!(n, vec![vec![0., 0.]]);
    }

    #[test]
    fn cls_pooling_takes_the_first_token() {
        let hidden = t3(&[1., 2., 3., 4., 5., 6., 7., 8.], (2, 2, 2));
        let mask = Tensor::new(&[[1u32, 1], [1, 0]], &Device::Cpu).unwrap();
        let p = pool(&hidden, &mask, Pooling::Cls)
            .unwrap()
            .to_vec2::<f32>()
            .unwrap();
        assert_eq!(p, vec![vec![1., 2.], vec![5., 6.]]);
    }

    #[test]
    fn normalisation_gives_unit_rows() {
        let x = Tensor::new(&[[3f32, 4.], [0., -2.]], &Device::Cpu).unwrap();
        let n = l2_normalize(&x).unwrap().to_vec2::<f32>().unwrap();
        assert_eq!(n, vec![vec![0.6, 0.8], vec![0., -1.]]);
    }
}
