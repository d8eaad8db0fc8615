// SPDX-License-Identifier: MIT
pragma solidity 0.8.28;

import {ReserveBoundedPolicy} from "./ReserveBoundedPolicy.sol";

/// @title KellyPolicy
/// @notice Fractional-Kelly settlement. The Kelly-optimal exposure to the strategies is
///         f* = expectedEdge / variance (annual excess return over its variance); the policy runs a
///         fraction of it: exposure = min(maxExposure, kellyFraction * f*). The reserve target is the
///         unexposed part, 1 - exposure, clamped to [reserveTargetMin, reserveTargetMax].
///         On a profit, the unexposed fraction (1 - exposure) is paid to the holders; while the
///         reserve is below its target it also takes reserveTarget of the profit; the rest is
///         compounded into the NAV. A loss is absorbed by the reserve down to its floor, the
///         remainder by the NAV. Reserve above the cap flows into the NAV.
contract KellyPolicy is ReserveBoundedPolicy {
    /// @notice Fraction of full Kelly actually run, in bps (5000 = half Kelly).
    uint16 public immutable kellyFractionBps;
    /// @notice Expected annual excess return of the strategy book, in bps.
    uint16 public immutable expectedEdgeBps;
    /// @notice Annual variance of the strategy book's return, in bps (400 = 0.04, a 20% volatility).
    uint16 public immutable varianceBps;
    /// @notice Hard cap on the exposure, in bps of the NAV assets.
    uint16 public immutable maxExposureBps;

    constructor(
        uint16 kellyFractionBps_,
        uint16 expectedEdgeBps_,
        uint16 varianceBps_,
        uint16 maxExposureBps_,
        uint16 reserveTargetMinBps_,
        uint16 reserveTargetMaxBps_
    ) ReserveBoundedPolicy(reserveTargetMinBps_, reserveTargetMaxBps_) {
        if (varianceBps_ == 0 || kellyFractionBps_ > BPS || maxExposureBps_ > BPS) revert InvalidParams();
        kellyFractionBps = kellyFractionBps_;
        expectedEdgeBps = expectedEdgeBps_;
        varianceBps = varianceBps_;
        maxExposureBps = maxExposureBps_;
    }

    function kind() external pure returns (string memory) {
        return "fractional-kelly";
    }

    function params()
        external
        view
        returns (
            uint16 kellyFractionBps_,
            uint16 expectedEdgeBps_,
            uint16 varianceBps_,
            uint16 maxExposureBps_,
            uint16 reserveTargetMinBps_,
            uint16 reserveTargetMaxBps_
        )
    {
        return (
            kellyFractionBps,
            expectedEdgeBps,
            varianceBps,
            maxExposureBps,
            reserveTargetMinBps(),
            reserveTargetMaxBps()
        );
    }

    /// @notice The exposure the policy runs: min(maxExposure, kellyFraction * edge / variance), in bps.
    function exposureBps() public view returns (uint16) {
        uint256 fractional = (uint256(kellyFractionBps) * expectedEdgeBps) / varianceBps;
        return fractional < maxExposureBps ? uint16(fractional) : maxExposureBps;
    }

    /// @notice The reserve target: the unexposed part clamped to the floor and the cap, in bps.
    function reserveTargetBps() public view returns (uint16) {
        uint16 unexposed = BPS - exposureBps();
        if (unexposed < reserveTargetMinBps()) return reserveTargetMinBps();
        if (unexposed > reserveTargetMaxBps()) return reserveTargetMaxBps();
        return unexposed;
    }

    function split(
        int256 pnl,
        uint256 navAssets,
        uint256 reserve
    ) external view returns (uint256 toHolders, int256 reserveDelta, int256 navDelta) {
        if (pnl <= 0) {
            uint256 drawn = _drawFromReserve(uint256(-pnl), navAssets, reserve);
            return (0, -int256(drawn), pnl + int256(drawn));
        }
        uint256 profit = uint256(pnl);
        uint256 target = (navAssets * reserveTargetBps()) / BPS;
        uint256 toReserve = 0;
        if (reserve < target) {
            toReserve = (profit * reserveTargetBps()) / BPS;
            if (toReserve > target - reserve) toReserve = target - reserve;
        }
        toHolders = (profit * (BPS - exposureBps())) / BPS;
        reserveDelta = _cappedReserveDelta(toReserve, navAssets, reserve);
        navDelta = pnl - int256(toHolders) - reserveDelta;
    }
}
