# source: https://github.com/KUL-recon-lab/parallelproj/pull/120
# fixed twin: the side angles are created on the chosen device, as commit d10be47 does.
import torch as xp


class RegularPolygonPETScannerModule:
    def __init__(self, xp, dev, radius, num_sides, num_lor_endpoints_per_side, lor_spacing, ax0=0, ax1=1, phis=None):
        self.xp, self.dev = xp, dev
        self.radius = radius
        self.num_sides = num_sides
        self.num_lor_endpoints_per_side = num_lor_endpoints_per_side
        self.num_lor_endpoints = num_sides * num_lor_endpoints_per_side
        self.lor_spacing = lor_spacing
        self.ax0, self.ax1 = ax0, ax1
        self.lor_endpoint_numbers = xp.arange(self.num_lor_endpoints, device=dev)
        if phis is None:
            self._phis = 2 * xp.pi * xp.arange(num_sides, dtype=xp.float32, device=dev) / num_sides
        else:
            self._phis = phis

    def get_raw_lor_endpoints(self, inds=None):
        if inds is None:
            inds = self.lor_endpoint_numbers
        side = inds // self.num_lor_endpoints_per_side
        tmp = (inds - side * self.num_lor_endpoints_per_side).to(self.xp.float32)
        tmp = tmp - (self.num_lor_endpoints_per_side / 2 - 0.5)
        phi = self.xp.take(self._phis, side)
        lor_endpoints = self.xp.zeros((self.num_lor_endpoints, 3), device=self.dev)
        lor_endpoints[:, self.ax0] = self.xp.cos(phi) * self.radius - self.xp.sin(phi) * self.lor_spacing * tmp
        lor_endpoints[:, self.ax1] = self.xp.sin(phi) * self.radius + self.xp.cos(phi) * self.lor_spacing * tmp
        return lor_endpoints


class RegularPolygonPETScannerGeometry:
    def __init__(self, xp, dev, radius, num_sides, num_lor_endpoints_per_side, lor_spacing, ring_positions, phis=None):
        self.xp, self.dev = xp, dev
        self.ring_positions = ring_positions
        self.modules = [
            RegularPolygonPETScannerModule(xp, dev, radius, num_sides, num_lor_endpoints_per_side, lor_spacing, phis=phis)
            for _ in range(len(ring_positions))
        ]

    def get_lor_endpoints(self):
        endpoints = []
        for z, module in zip(self.ring_positions, self.modules):
            ep = module.get_raw_lor_endpoints()
            ep[:, 2] = z
            endpoints.append(ep)
        return self.xp.cat(endpoints)


if __name__ == "__main__":
    dev = "cuda" if xp.cuda.is_available() else "cpu"
    scanner = RegularPolygonPETScannerGeometry(
        xp,
        dev,
        radius=65.0,
        num_sides=6,
        num_lor_endpoints_per_side=15,
        lor_spacing=2.3,
        ring_positions=xp.asarray([0.0], device=dev),
        phis=(2 * xp.pi / 12) * xp.asarray([-1, 0, 1, 5, 6, 7], device=dev),
    )
    print(scanner.get_lor_endpoints().shape)
