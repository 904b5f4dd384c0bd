// What each input pipeline asks of the host per image of the generated dataset (500x375 JPEG,
// quality 90, RandomResizedCrop to 224): libjpeg-turbo's decode plus the uint8 crop and resize
// (the CPU rungs' workers), against the header check and crop box alone (the nvjpeg rung's
// workers); on CUDA, nvJPEG's batched decode with the device crop, per image of a batch of 64.
// CUDA rows use event time on the stream; CPU rows the wall clock.
//   build/suites/micro/tipbench_micro --benchmark_filter=Jpeg --benchmark_repetitions=9
#include "tipbench/data/augment.h"
#include "tipbench/data/device_augment.h"
#include "tipbench/data/draw.h"
#include "tipbench/data/jpeg.h"
#include "tipbench/data/nvjpeg_decoder.h"
#include "tipbench/data/rng.h"

#include <ATen/cuda/CUDAEvent.h>
#include <benchmark/benchmark.h>
#include <c10/cuda/CUDAStream.h>
#include <torch/torch.h>

namespace {

namespace data = tipbench::data;

constexpr int kImages = 16;  // distinct images, so no run decodes one file from a warm cache

std::vector<std::vector<std::uint8_t>> drawn_files() {
  std::vector<std::vector<std::uint8_t>> files;
  for (int i = 0; i < kImages; ++i)
    files.push_back(data::encode_jpeg(data::draw_sample(0, i, i % 10, 10, 500, 375), 90));
  return files;
}

data::CropBox box_for(int i, const data::AugmentOptions& augment) {
  data::Rng rng = data::Rng::keyed({0, static_cast<std::uint64_t>(i), 0xa0a0});
  return data::random_resized_crop(500, 375, augment, rng);
}

// path 0: decode + crop/resize to uint8 on the host; path 1: inspect + crop box (no pixels).
void BM_JpegHostWork(benchmark::State& state) {
  const bool decode = state.range(0) == 0;
  const auto files = drawn_files();
  data::AugmentOptions augment;
  data::RgbImage image;
  data::ResizeScratch scratch;
  data::JpegHeader header;
  std::vector<std::uint8_t> out(3 * 224 * 224);
  std::string error;
  int i = 0;
  for (auto _ : state) {
    const auto& file = files[i % kImages];
    if (decode) {
      if (!data::decode_jpeg(file, image, error)) state.SkipWithError(error.c_str());
      data::crop_resize_u8(image, box_for(i, augment), augment, out.data(), scratch);
    } else {
      if (!data::inspect_jpeg(file, header, error)) state.SkipWithError(error.c_str());
      benchmark::DoNotOptimize(box_for(i, augment));
    }
    ++i;
  }
  state.SetItemsProcessed(state.iterations());
}

void BM_JpegNvjpegBatch(benchmark::State& state) {
  const torch::Device device(torch::kCUDA, 0);
  if (auto why = data::nvjpeg_unavailable_reason(torch::cuda::is_available() ? device : torch::Device(torch::kCPU))) {
    state.SkipWithError(why->c_str());
    return;
  }
  const int batch = static_cast<int>(state.range(0));
  const auto files = drawn_files();
  std::vector<std::span<const std::uint8_t>> spans;
  for (int k = 0; k < batch; ++k) spans.emplace_back(files[k % kImages]);
  data::AugmentOptions augment;
  data::NvjpegDecoder decoder(device);
  auto out = torch::empty({batch, 3, 224, 224}, torch::TensorOptions().dtype(torch::kByte).device(device));
  at::cuda::CUDAEvent start(cudaEventDefault), stop(cudaEventDefault);
  for (auto _ : state) {
    const auto stream = c10::cuda::getCurrentCUDAStream();
    start.record(stream);
    const auto decoded = decoder.decode(spans);
    for (int k = 0; k < batch; ++k) data::crop_resize_flip_into(decoded[k].image, box_for(k, augment), out[k]);
    stop.record(stream);
    stop.synchronize();
    state.SetIterationTime(start.elapsed_time(stop) / 1000.0);
  }
  state.SetItemsProcessed(state.iterations() * batch);
  state.SetLabel(decoder.backend());
}

BENCHMARK(BM_JpegHostWork)
    ->ArgNames({"inspect_only", "cuda"})
    ->Args({0, 0})
    ->Args({1, 0})
    ->Unit(benchmark::kMicrosecond);
BENCHMARK(BM_JpegNvjpegBatch)
    ->ArgNames({"batch", "cuda"})
    ->Args({64, 1})
    ->UseManualTime()
    ->Unit(benchmark::kMicrosecond);

}  // namespace
