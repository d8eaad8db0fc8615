// SPDX-License-Identifier: MIT
pragma solidity 0.8.28;

import {IFundPolicy} from "./IFundPolicy.sol";

/// @title ReserveBoundedPolicy
/// @notice What both settlement policies share: a reserve kept between a floor and a cap (bps of
///         the NAV assets). Shortfalls and losses are absorbed by the reserve down to its floor;
///         reserve above the cap is released into the NAV.
abstract contract ReserveBoundedPolicy is IFundPolicy {
    error InvalidParams();

    uint16 internal constant BPS = 10_000;

    uint16 private immutable _reserveTargetMinBps;
    uint16 private immutable _reserveTargetMaxBps;

    constructor(uint16 reserveTargetMinBps_, uint16 reserveTargetMaxBps_) {
        if (reserveTargetMinBps_ > reserveTargetMaxBps_ || reserveTargetMaxBps_ > BPS) revert InvalidParams();
        _reserveTargetMinBps = reserveTargetMinBps_;
        _reserveTargetMaxBps = reserveTargetMaxBps_;
    }

    function reserveTargetMinBps() public view returns (uint16) {
        return _reserveTargetMinBps;
    }

    function reserveTargetMaxBps() public view returns (uint16) {
        return _reserveTargetMaxBps;
    }

    function _reserveFloor(uint256 navAssets) internal view returns (uint256) {
        return (navAssets * _reserveTargetMinBps) / BPS;
    }

    function _reserveCap(uint256 navAssets) internal view returns (uint256) {
        return (navAssets * _reserveTargetMaxBps) / BPS;
    }

    /// @dev Covers `shortfall` from the reserve as far as the floor allows. Returns the amount drawn.
    function _drawFromReserve(uint256 shortfall, uint256 navAssets, uint256 reserve) internal view returns (uint256) {
        uint256 floor = _reserveFloor(navAssets);
        uint256 available = reserve > floor ? reserve - floor : 0;
        return shortfall < available ? shortfall : available;
    }

    /// @dev The reserve change when `toReserve` is offered to a reserve bounded by its cap. Whatever
    ///      the reserve does not keep (including a reserve already above the cap, released down to
    ///      it) is left to the caller to credit to the NAV.
    function _cappedReserveDelta(uint256 toReserve, uint256 navAssets, uint256 reserve) internal view returns (int256) {
        uint256 cap = _reserveCap(navAssets);
        if (reserve + toReserve <= cap) return int256(toReserve);
        if (reserve <= cap) return int256(cap - reserve);
        return -int256(reserve - cap);
    }
}
