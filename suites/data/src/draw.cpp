#include "tipbench/data/draw.h"

#include "tipbench/data/rng.h"

#include <algorithm>
#include <cmath>
#include <stdexcept>

namespace tipbench::data {

namespace {

struct Colour {
  float r, g, b;
};

Colour lerp(const Colour& a, const Colour& b, float t) {
  return {a.r + (b.r - a.r) * t, a.g + (b.g - a.g) * t, a.b + (b.b - a.b) * t};
}

// HSV in [0, 1] to RGB in [0, 255].
Colour from_hsv(double h, double s, double v) {
  h = (h - std::floor(h)) * 6;
  const int sector = static_cast<int>(h) % 6;
  const double f = h - std::floor(h);
  const double p = v * (1 - s), q = v * (1 - s * f), t = v * (1 - s * (1 - f));
  double r = v, g = t, b = p;
  switch (sector) {
    case 1:
      r = q;
      g = v;
      b = p;
      break;
    case 2:
      r = p;
      g = v;
      b = t;
      break;
    case 3:
      r = p;
      g = q;
      b = v;
      break;
    case 4:
      r = t;
      g = p;
      b = v;
      break;
    case 5:
      r = v;
      g = p;
      b = q;
      break;
    default: break;
  }
  return {float(r * 255), float(g * 255), float(b * 255)};
}

// Whether (u, v), relative to the centre of a shape of radius 1 (already rotated), is inside it.
bool inside(int shape, double u, double v) {
  const double au = std::abs(u), av = std::abs(v);
  switch (shape) {
    case 0: return u * u + v * v <= 1;                         // circle
    case 1: return au <= 0.8 && av <= 0.8;                     // square
    case 2: return v <= 0.5 && v >= -1 + std::sqrt(3.0) * au;  // triangle, apex up
    case 3: {
      const double d = u * u + v * v;
      return d <= 1 && d >= 0.3;
    }                                                                 // ring
    case 4: return (au <= 0.3 && av <= 1) || (av <= 0.3 && au <= 1);  // cross
    default: return au <= 1 && av <= 0.35;                            // bar
  }
}

std::uint8_t clamp_byte(float x) { return static_cast<std::uint8_t>(std::clamp(x, 0.0f, 255.0f) + 0.5f); }

}  // namespace

RgbImage draw_sample(std::uint64_t seed, std::int64_t index, int label, int classes, int width, int height) {
  if (width <= 0 || height <= 0 || classes <= 0 || label < 0 || label >= classes) {
    throw std::invalid_argument("draw_sample: bad size, class count or label");
  }
  Rng rng = Rng::keyed({seed, static_cast<std::uint64_t>(index), 0xd2a3});
  // Background: a gradient between two muted random colours along a random direction.
  const Colour bg0 = from_hsv(rng.uniform(), rng.uniform(0.1, 0.5), rng.uniform(0.2, 0.9));
  const Colour bg1 = from_hsv(rng.uniform(), rng.uniform(0.1, 0.5), rng.uniform(0.2, 0.9));
  const double angle = rng.uniform(0, 2 * M_PI);
  const double gx = std::cos(angle), gy = std::sin(angle);
  const double extent = std::abs(gx) * width + std::abs(gy) * height;
  const double g0 = std::min(0.0, gx * width) + std::min(0.0, gy * height);
  // The object: shape and hue from the class (the golden ratio spreads hues apart), the rest random.
  const int shape = label % kShapeCount;
  const double hue = std::fmod(label * 0.6180339887, 1.0) + rng.uniform(-0.02, 0.02);
  const Colour fg = from_hsv(hue, rng.uniform(0.7, 1.0), rng.uniform(0.75, 1.0));
  const Colour fg_shade = lerp(fg, {0, 0, 0}, 0.35f);
  const double side = std::min(width, height);
  const double radius = side * rng.uniform(0.18, 0.38);
  const double cx = width * rng.uniform(0.3, 0.7), cy = height * rng.uniform(0.3, 0.7);
  const double rot = rng.uniform(0, 2 * M_PI), rc = std::cos(rot), rs = std::sin(rot);
  // Grain: uniform noise per pixel and channel; photographs' sensor noise and texture.
  const int grain = 32;

  RgbImage img(width, height);
  for (int y = 0; y < height; ++y) {
    for (int x = 0; x < width; ++x) {
      const double dx = (x + 0.5 - cx) / radius, dy = (y + 0.5 - cy) / radius;
      const double u = rc * dx + rs * dy, v = -rs * dx + rc * dy;
      Colour c;
      if (inside(shape, u, v)) {
        c = lerp(fg, fg_shade, static_cast<float>(std::clamp((v + 1) / 2, 0.0, 1.0)));  // lit from above
      } else {
        c = lerp(bg0, bg1, static_cast<float>((gx * x + gy * y - g0) / extent));
      }
      const std::uint64_t bits = rng.next();
      std::uint8_t* p = img.at(x, y);
      p[0] = clamp_byte(c.r + static_cast<float>(bits & 0xff) * (2.0f * grain / 255) - grain);
      p[1] = clamp_byte(c.g + static_cast<float>((bits >> 8) & 0xff) * (2.0f * grain / 255) - grain);
      p[2] = clamp_byte(c.b + static_cast<float>((bits >> 16) & 0xff) * (2.0f * grain / 255) - grain);
    }
  }
  return img;
}

}  // namespace tipbench::data
