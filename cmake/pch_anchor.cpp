// Anchor translation unit for the shared precompiled header (see TipbenchTorch.cmake).
