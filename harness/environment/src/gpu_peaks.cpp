#include "tipbench/environment/gpu_peaks.h"

#include <algorithm>

namespace tipbench {

const std::vector<DensePeaks>& dense_peak_table() {
  // Datasheet Tensor Core rates are quoted with 2:4 sparsity ("*"): the dense rate is half.
  static const std::vector<DensePeaks> table = {
      {"H100 SXM5",
       {"NVIDIA H100 80GB HBM3"},
       66.9,
       494.7,
       989.4,
       "NVIDIA H100 Tensor Core GPU datasheet: FP32 67 TFLOPS, TF32 989 and BF16 1,979 TFLOPS with sparsity (SXM)"},
      {"H100 PCIe",
       {"NVIDIA H100 PCIe"},
       51.2,
       378.0,
       756.5,
       "NVIDIA H100 Tensor Core GPU datasheet: FP32 51 TFLOPS, TF32 756 and BF16 1,513 TFLOPS with sparsity (PCIe)"},
      {"H200 SXM",
       {"NVIDIA H200"},
       66.9,
       494.7,
       989.4,
       "NVIDIA H200 Tensor Core GPU datasheet: the H100 SXM's compute (FP32 67 TFLOPS, TF32 989 and BF16 1,979 "
       "TFLOPS with sparsity) with 141 GB of HBM3e"},
      {"A100",
       {"NVIDIA A100-SXM4-80GB", "NVIDIA A100-SXM4-40GB", "NVIDIA A100 80GB PCIe", "NVIDIA A100-PCIE-40GB"},
       19.5,
       156.0,
       312.0,
       "NVIDIA A100 Tensor Core GPU datasheet: FP32 19.5 TFLOPS, TF32 156 and BF16 312 TFLOPS dense (312 and 624 with "
       "sparsity)"},
  };
  return table;
}

const DensePeaks* dense_peaks(const std::string& gpu_name) {
  for (const auto& row : dense_peak_table()) {
    if (std::find(row.gpu_names.begin(), row.gpu_names.end(), gpu_name) != row.gpu_names.end()) return &row;
  }
  return nullptr;
}

}  // namespace tipbench
