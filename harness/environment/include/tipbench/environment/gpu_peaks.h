// The dense peak rates of the GPUs tipbench knows, from their vendors' datasheets (the Tensor Core
// figures there are "with sparsity": the dense rate is half). What MFU divides by. Example:
//   if (const auto* p = tipbench::dense_peaks("NVIDIA H100 80GB HBM3")) double bf16 = p->bf16_tflops;
#pragma once

#include <string>
#include <vector>

namespace tipbench {

struct DensePeaks {
  std::string kind;                    // "H100 SXM5"
  std::vector<std::string> gpu_names;  // as the driver names them: "NVIDIA H100 80GB HBM3"
  double fp32_tflops = 0;              // plain fp32, no Tensor Cores
  double tf32_tflops = 0;              // TF32 Tensor Cores, dense
  double bf16_tflops = 0;              // bf16 and fp16 Tensor Cores (fp32 accumulate), dense
  std::string source;                  // the datasheet
};

// Every GPU kind in the table.
const std::vector<DensePeaks>& dense_peak_table();
// The kind whose names hold `gpu_name` exactly; nullptr for a GPU not in the table.
const DensePeaks* dense_peaks(const std::string& gpu_name);

}  // namespace tipbench
